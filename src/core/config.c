/*
 * Settings table (see config.h). Sizes accept K/M/G suffixes; booleans
 * accept 1/0, yes/no, on/off, true/false.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/config.h"

struct plx_config plx_config;

#define PLX_SET(nm, ty, def, field, help) \
    { nm, ty, def, help, offsetof(struct plx_config, field), sizeof(((struct plx_config *)0)->field), PLX_LIVE_NO }
/* A setting read where it is used, not only at MPI_Init (see config.h) */
#define PLX_SET_LIVE(nm, ty, def, field, live, help) \
    { nm, ty, def, help, offsetof(struct plx_config, field), sizeof(((struct plx_config *)0)->field), live }

const struct plx_setting plx_settings[] = {
    PLX_SET("PLEXUS_DEBUG", PLX_SET_INT, "0", debug,
            "Debug output level: 0 none, 1 decisions (transports, fallbacks), 2 per-connection events"),
    PLX_SET("PLEXUS_TRANSPORTS", PLX_SET_STRING, "", transports,
            "Comma-separated transports to use (shm, tcp, sctp); empty = every transport that works"),
    PLX_SET("PLEXUS_NODE_NAME", PLX_SET_STRING, "", node_name,
            "Name of this node for locality decisions; default: the hostname"),
    PLX_SET("PLEXUS_SHM_RING_SIZE", PLX_SET_SIZE, "256K", shm_ring_size,
            "Bytes of each per-pair shared-memory ring (power of two)"),
    PLX_SET("PLEXUS_SHM_EAGER_MAX", PLX_SET_SIZE, "12K", shm_eager_max,
            "Largest message sent eagerly over shared memory; larger ones use rendezvous"),
    PLX_SET("PLEXUS_SHM_EAGER_CREDIT", PLX_SET_SIZE, "1M", shm_eager_credit,
            "Eager bytes a sender may have unconsumed at one receiver before it switches to rendezvous"),
    PLX_SET("PLEXUS_SHM_FRAG_SIZE", PLX_SET_SIZE, "32K", shm_frag_size,
            "Fragment size of the pipelined copy used when cross-memory attach is not allowed"),
    PLX_SET("PLEXUS_SHM_CMA", PLX_SET_BOOL, "1", shm_cma,
            "Use cross-memory attach (process_vm_readv) for large shared-memory messages"),
    PLX_SET("PLEXUS_SHM_ALIGN", PLX_SET_STRING, "auto", shm_align,
            "Alignment of 4 KiB+ payloads in the rings, kept equal to the sender's: page (4096), line (64), "
            "none, or auto (page on AMD CPUs, whose memcpy slows down 25x on a skew modulo 4096; else none)"),
    PLX_SET("PLEXUS_SHM_COOP_MIN", PLX_SET_SIZE, "128K", shm_coop_min,
            "Smallest cross-memory-attach message that sender and receiver copy together (0: never)"),
    PLX_SET("PLEXUS_BIND", PLX_SET_STRING, "core", bind,
            "Read by mpiexec and plexus-proxy: core binds local rank i to the i-th allowed CPU when a "
            "host runs 2 or more ranks and no more than its CPUs; none leaves placement to the scheduler"),
    PLX_SET_LIVE("PLEXUS_SPIN_COUNT", PLX_SET_INT, "2000", spin_count, PLX_LIVE_LOCAL,
            "Polls of the progress engine before a blocked wait starts yielding the CPU"),
    PLX_SET_LIVE("PLEXUS_YIELD_COUNT", PLX_SET_INT, "50", yield_count, PLX_LIVE_LOCAL,
            "sched_yield() rounds before a blocked wait sleeps until a peer rings its doorbell"),
    PLX_SET_LIVE("PLEXUS_STATS", PLX_SET_BOOL, "0", stats, PLX_LIVE_LOCAL,
            "Print messages and bytes per channel per peer at MPI_Finalize"),
    PLX_SET("PLEXUS_IFACES", PLX_SET_STRING, "", ifaces,
            "Network interfaces to use: names or CIDR blocks, comma-separated; ^ excludes "
            "(e.g. eth0,10.1.0.0/16 or ^docker0). Default: every up non-loopback interface "
            "(loopback between ranks of one host)"),
    PLX_SET("PLEXUS_TCP_EAGER_MAX", PLX_SET_SIZE, "64K", tcp_eager_max,
            "Largest message sent eagerly over TCP; larger ones use rendezvous (zero copy)"),
    PLX_SET("PLEXUS_TCP_EAGER_CREDIT", PLX_SET_SIZE, "4M", tcp_eager_credit,
            "Eager bytes a sender may have unconsumed at one TCP receiver before it switches to rendezvous"),
    PLX_SET("PLEXUS_TCP_PORTS", PLX_SET_STRING, "", tcp_ports,
            "Port range for the TCP listening socket, lo-hi (e.g. 50000-50100); default: any free port"),
    PLX_SET("PLEXUS_TCP_CONNECT_TIMEOUT", PLX_SET_INT, "30", tcp_connect_timeout,
            "Seconds a TCP connection (connect and handshake, per address tried) may take before "
            "the job ends with an error"),
    PLX_SET("PLEXUS_TCP_PEER_TIMEOUT", PLX_SET_INT, "30", tcp_peer_timeout,
            "Seconds a connected TCP peer may leave data unacknowledged, or an idle connection "
            "unanswered (keepalive), before it counts as lost and the job ends; 0 = the kernel's defaults"),
    PLX_SET("PLEXUS_TCP_SOCKBUF", PLX_SET_SIZE, "0", tcp_sockbuf,
            "TCP socket send/receive buffer size; 0 = the kernel's autotuning (grows to net.ipv4.tcp_[rw]mem)"),
    PLX_SET("PLEXUS_TCP_SENDQ_MAX", PLX_SET_SIZE, "1M", tcp_sendq_max,
            "Bytes of small messages a TCP connection copies and queues while its socket is busy; "
            "beyond it senders wait"),
    PLX_SET("PLEXUS_COLL_SHM", PLX_SET_BOOL, "1", coll_shm,
            "Blocking Barrier/Bcast/Reduce/Allreduce/Allgather/Alltoall on a communicator within one "
            "node go through a shared segment (in chunks when large) instead of messages"),
    PLX_SET("PLEXUS_COLL_SHM_MAX", PLX_SET_SIZE, "8K", coll_shm_max,
            "Largest Reduce/Allreduce (bytes per rank) done in one round through the shared segment; "
            "larger ones go through it in chunks"),
    PLX_SET("PLEXUS_COLL_OVERSUB", PLX_SET_STRING, "auto", coll_oversub,
            "Collective algorithms for more ranks than CPUs (rank 0 ends the shared-memory Barrier, large "
            "Alltoall blocks all in flight at once): on, off, or auto (when this node's ranks outnumber its CPUs)"),
    PLX_SET("PLEXUS_ROUTE", PLX_SET_STRING, "", route,
            "Routing rules, first match wins: 'COND:TARGET; ...' where COND is *, pt2pt, coll, rma, "
            "size<=N, size>=N, size<N, size>N (joined with &) and TARGET a channel (shm, tcp0, tcp1), "
            "a transport (tcp: its first working rail) or tcp* (striped over every TCP rail); "
            "e.g. 'size<=64K:tcp0; *:tcp*'. Empty: shm on a node, else the fastest transport, striped "
            "from PLEXUS_ROUTE_STRIPE_MIN"),
    PLX_SET("PLEXUS_ROUTE_STRIPE_MIN", PLX_SET_SIZE, "256K", route_stripe_min,
            "Without rules: smallest message striped over every rail of its transport"),
    PLX_SET("PLEXUS_ROUTE_CHUNK", PLX_SET_SIZE, "512K", route_chunk,
            "Piece of a striped message given to one rail at a time (each to the rail with the least "
            "unsent data, so a faster rail carries more)"),
    PLX_SET("PLEXUS_ROUTE_EXTRA_BYTES", PLX_SET_SIZE, "1M", route_extra_bytes,
            "Bytes a process sends a peer over its first channel before the peer's other channels (extra "
            "rails) take part in striping; a rule that names a channel uses it at once"),
    PLX_SET("PLEXUS_ROUTE_EXTRA_PEERS", PLX_SET_INT, "64", route_extra_peers,
            "Most peers of a process whose messages are striped over extra channels (the busiest first "
            "come; the others keep one channel, plus the rest for failover)"),
    PLX_SET("PLEXUS_TCP_RAILS", PLX_SET_INT, "0", tcp_rails,
            "Most TCP rails (connections over different interfaces) per peer; 0: one per interface "
            "selected by PLEXUS_IFACES that reaches the peer (at most 4), and one to a rank of this node. "
            "N > 0 also opens N rails over loopback to a rank of this node (tests)"),
    PLX_SET("PLEXUS_TCP_RAIL_TIMEOUT", PLX_SET_INT, "2", tcp_rail_timeout,
            "Seconds a rail may stay silent (data unacknowledged, or no keepalive answer) before it counts "
            "as failed and its data goes again on the other rails (peers with two rails or more)"),
    /* MPI-IO (issue 18): defaults of the hints a program may set per file */
    PLX_SET_LIVE("PLEXUS_IO_CB_BUFFER_SIZE", PLX_SET_SIZE, "16M", io_cb_buffer_size, PLX_LIVE_ALL_EQ,
            "MPI-IO collective buffering: bytes an aggregator reads or writes per round (hint cb_buffer_size)"),
    PLX_SET_LIVE("PLEXUS_IO_CB_NODES", PLX_SET_INT, "0", io_cb_nodes, PLX_LIVE_ALL_EQ,
            "MPI-IO collective buffering: number of aggregators; 0 = one per node (hint cb_nodes)"),
    PLX_SET("PLEXUS_PMI", PLX_SET_STRING, "auto", pmi,
            "Process-manager protocol: auto (PMIx when PMIX_RANK is set, PMI-2 when PMI_FD and PMI_JOBID "
            "are, as under srun --mpi=pmi2, else PMI-1 on PMI_FD, else a singleton), pmi1, pmi2 or pmix"),
    /* Issue 12: the asynchronous progress thread (src/progress/progress.c) */
    PLX_SET("PLEXUS_ASYNC_PROGRESS", PLX_SET_BOOL, "0", async_progress,
            "Run a progress thread that completes rendezvous transfers and remote-memory operations "
            "while the application computes without calling MPI; it sleeps on the transports' "
            "doorbells when idle (turns the library's thread-safe paths on)"),
    /* issue 15: shared memory that grows with the peers used */
    PLX_SET("PLEXUS_SHM_QUEUE_SIZE", PLX_SET_SIZE, "128K", shm_queue_size,
            "Bytes of each process's shared-memory inbound queue, which every node peer may write (power of two)"),
    PLX_SET("PLEXUS_SHM_FAST_RINGS", PLX_SET_INT, "4", shm_fast_rings,
            "Per-pair shared-memory rings (PLEXUS_SHM_RING_SIZE each) a process offers its busiest senders; "
            "a segment holds the queue plus these, whatever the number of ranks on the node"),
    PLX_SET("PLEXUS_SHM_FAST_AFTER", PLX_SET_INT, "64", shm_fast_after,
            "Messages a sender passes through a peer's queue before it asks for a per-pair ring (0 when the "
            "node has no more ranks than PLEXUS_SHM_FAST_RINGS: every pair gets one at once)"),
    PLX_SET("PLEXUS_TEST_DIE_AT", PLX_SET_STRING, "", test_die_at,
            "Testing only: POINT:RANK makes that rank kill itself (SIGKILL) on reaching POINT of MPI_Init "
            "(pm, shm-created, cards, route, init)"),
    PLX_SET("PLEXUS_TEST_ZCOPY_FAIL", PLX_SET_INT, "0", test_zcopy_fail,
            "Testing only: N > 0 makes every N-th zero-copy piece the router would send fail with an I/O "
            "error (the message then goes on by copy)"),
    /* one-sided communication (issue 12) */
    PLX_SET("PLEXUS_RMA_SHM", PLX_SET_BOOL, "1", rma_shm,
            "Windows of MPI_Win_allocate whose ranks share a node live in shared memory, reached by load/store (0: active messages)"),
    /* the SCTP transport (issue 13; built when libusrsctp is found, started only when
     * PLEXUS_TRANSPORTS or PLEXUS_ROUTE names sctp) */
    PLX_SET("PLEXUS_SCTP_STREAMS", PLX_SET_INT, "16", sctp_streams,
            "SCTP streams per association (even, 4..256): stream 0 for control, half for matched messages "
            "by a hash of (communicator, tag), half for rendezvous data; both sides must agree"),
    PLX_SET("PLEXUS_SCTP_FRAG", PLX_SET_SIZE, "64K", sctp_frag,
            "Largest SCTP message the SCTP transport sends; larger packets are cut into several"),
    PLX_SET("PLEXUS_SCTP_EAGER_MAX", PLX_SET_SIZE, "64K", sctp_eager_max,
            "Largest message sent eagerly over SCTP; larger ones use rendezvous"),
    PLX_SET("PLEXUS_SCTP_EAGER_CREDIT", PLX_SET_SIZE, "1M", sctp_eager_credit,
            "Eager bytes a sender may have unconsumed at one SCTP receiver before it switches to rendezvous"),
    PLX_SET("PLEXUS_SCTP_MTU", PLX_SET_INT, "0", sctp_mtu,
            "Path MTU of the SCTP associations of a job that spans nodes; 0 = path MTU discovery"),
    PLX_SET("PLEXUS_SCTP_MTU_LOCAL", PLX_SET_INT, "16384", sctp_mtu_local,
            "Path MTU of the SCTP associations of a job within one node (loopback; discovery off). Above ~20000 "
            "usrsctp 0.9.5 drops its own packets (mbuf chains longer than 32); 0 = discovery (1500: far slower)"),
    PLX_SET("PLEXUS_SCTP_CMT", PLX_SET_BOOL, "0", sctp_cmt,
            "Concurrent multipath transfer: SCTP sends over every path of a multihomed association at once"),
    PLX_SET("PLEXUS_SCTP_CONNECT_TIMEOUT", PLX_SET_INT, "30", sctp_connect_timeout,
            "Seconds an SCTP association (INIT and the HELLO handshake) may take before the peer counts as "
            "unreachable; also how long an accepted association may stay silent before it is aborted"),
    PLX_SET("PLEXUS_SCTP_SOCKBUF", PLX_SET_SIZE, "256K", sctp_sockbuf,
            "usrsctp send and receive buffer of the SCTP socket (the receive window: data in flight, which a "
            "small message on another stream queues behind; 4M ran loopback at a third of the speed)"),
    PLX_SET("PLEXUS_SCTP_ASSOC_RETRANS", PLX_SET_INT, "10", sctp_assoc_retrans,
            "Retransmissions in a row over all paths after which an SCTP association is given up (each path "
            "is given up after 2; RTO 100..500 ms)"),
    PLX_SET("PLEXUS_SCTP_PACE", PLX_SET_SIZE, "32K", sctp_pace,
            "While eager messages go to or come from a peer (and 5 ms after), rendezvous data to it is handed to "
            "usrsctp in pieces of half this, with at most this much unacknowledged, so those messages wait behind "
            "little (head-of-line); streaming alone is not paced; 0 = never paced. Unset: at most two packets of "
            "the path MTU (1500 under discovery), and 32K with usrsctp's threads, 12K without "
            "(PLEXUS_SCTP_THREADS)"),
    /* session 11: usrsctp without its threads, driven by the progress engine (sctp_conn.c) */
    PLX_SET("PLEXUS_SCTP_THREADS", PLX_SET_STRING, "auto", sctp_threads,
            "on: usrsctp reads its UDP socket in threads of its own and hands every message over to the rank "
            "(associations multihomed over every selected interface; CMT); off: the progress engine reads the "
            "socket and runs usrsctp itself (AF_CONN: one path per association, no failover); auto: off when the "
            "launcher says every rank is on this node, else on. The same on every rank"),
    /* session 11: keeping mpiexec's binding measured faster than giving it up on an AMD VM */
    PLX_SET("PLEXUS_SCTP_UNBIND", PLX_SET_BOOL, "0", sctp_unbind,
            "When SCTP carries all of a rank's traffic, give up the CPU binding our mpiexec made by default "
            "(every thread of the rank, usrsctp's too, may then run on the CPUs of PLEXUS_MPIEXEC_CPUS); "
            "0 keeps each rank and its usrsctp threads on the rank's CPU"),
    /* issue 14: the libfabric transport */
    PLX_SET("PLEXUS_OFI_PROVIDER", PLX_SET_STRING, "", ofi_provider,
            "libfabric provider of the ofi transport (e.g. tcp;ofi_rxm or tcp+ofi_rxm, shm, sockets); default: FI_PROVIDER, "
            "else the first that opens a reliable datagram endpoint. Setting it turns ofi on"),
    PLX_SET("PLEXUS_OFI_EAGER_MAX", PLX_SET_SIZE, "16K", ofi_eager_max,
            "Largest message sent eagerly over libfabric; larger ones are read by the receiver (fi_read, zero copy)"),
    PLX_SET("PLEXUS_OFI_EAGER_CREDIT", PLX_SET_SIZE, "1M", ofi_eager_credit,
            "Eager bytes a sender may have unconsumed at one libfabric receiver before it switches to rendezvous"),
    PLX_SET("PLEXUS_OFI_MR_CACHE", PLX_SET_STRING, "auto", ofi_mr_cache,
            "Keep rendezvous buffers registered for reuse: auto (only for providers that do not pin pages, "
            "where a freed and reused buffer cannot go stale), on, off (register per message)"),
    PLX_SET("PLEXUS_RMA_FABRIC_LOCKS", PLX_SET_STRING, "auto", rma_fabric_locks,
            "Passive-target locks of message-path windows as a ticket word in the target's memory, changed by "
            "remote atomics (native where the channel has them, e.g. ofi): on, off (the target's lock queue), "
            "auto (on when PLEXUS_TRANSPORTS names ofi or PLEXUS_OFI_PROVIDER is set); the same on every rank"),
    /* issue 14, session 8: the ofi transport's RDMA fast path for small messages */
    PLX_SET("PLEXUS_OFI_FASTPATH", PLX_SET_STRING, "auto", ofi_fp,
            "The ofi transport's RDMA fast path for small messages: on, off, auto (on, except with the shm "
            "provider, whose fi_write is a process_vm_writev system call where fi_send is a copy into a shared "
            "queue, and the sockets provider: both measured slower with it)"),
    PLX_SET("PLEXUS_OFI_FASTPATH_PEERS", PLX_SET_INT, "8", ofi_fp_peers,
            "Most peers per process whose small messages come into a ring of buffers written by RDMA (fi_write) "
            "and polled, instead of send/receive; 0 turns the fast path off"),
    PLX_SET("PLEXUS_OFI_FASTPATH_AFTER", PLX_SET_INT, "16", ofi_fp_after,
            "Small messages a peer sends by send/receive before it is given a fast-path ring (0: at the first)"),
    PLX_SET("PLEXUS_OFI_FASTPATH_SLOTS", PLX_SET_INT, "32", ofi_fp_slots,
            "Slots of a fast-path ring: packets a sender may have in it before it falls back to send/receive"),
    PLX_SET("PLEXUS_OFI_FASTPATH_SLOT", PLX_SET_SIZE, "2K", ofi_fp_slot,
            "Bytes of a fast-path slot: messages up to this less 56 bytes (header, flags) take the ring"),
    /* issue 14, session 9: accumulates of message-path windows as native fabric atomics */
    PLX_SET("PLEXUS_RMA_NATIVE_ACC", PLX_SET_STRING, "auto", rma_native_acc,
            "MPI_Accumulate, Get_accumulate, Fetch_and_op and Compare_and_swap of message-path windows as the "
            "channel's native atomics (fi_atomic and kin over ofi), per window and basic type, decided at window "
            "creation: on, off (active messages), auto (on when PLEXUS_TRANSPORTS names ofi or "
            "PLEXUS_OFI_PROVIDER is set); the same on every rank"),
    PLX_SET("PLEXUS_OFI_FASTPATH_EVICT", PLX_SET_BOOL, "0", ofi_fp_evict,
            "With every fast-path ring given (PLEXUS_OFI_FASTPATH_PEERS), a peer that passes "
            "PLEXUS_OFI_FASTPATH_AFTER small messages takes the ring of the quietest peer, if that one took fewer "
            "meanwhile (revoked: the sender stops, answers with its last ring position, the ring is drained)"),
    /* issues 15 and 16, session 9: shared-memory segments reached by descriptor */
    PLX_SET("PLEXUS_SHM_SEGMENTS", PLX_SET_STRING, "auto", shm_segments,
            "How a process reaches a node peer's shared-memory segment: fd (the segment never has a name; a "
            "peer takes its descriptor with pidfd_getfd on first contact, also from another job), name (by "
            "its name in /dev/shm, unlinked once every node peer has opened it: under a launcher other than "
            "Plexus's mpiexec, every rank opens every node peer's segment in MPI_Init), auto (fd where the "
            "kernel allows it, else name)"),
};
const size_t plx_nsettings = sizeof plx_settings / sizeof plx_settings[0];

static int plx_config_parse(const struct plx_setting *s, const char *v)
{
    void *field = (char *)&plx_config + s->offset;
    char *end;
    switch (s->type) {
    case PLX_SET_INT: {
        errno = 0;
        long x = strtol(v, &end, 0);
        if (errno || end == v || *end)
            return -1;
        *(int *)field = (int)x;
        return 0;
    }
    case PLX_SET_SIZE: {
        errno = 0;
        unsigned long long x = strtoull(v, &end, 0);
        if (errno || end == v)
            return -1;
        switch (toupper((unsigned char)*end)) {
        case 0: break;
        case 'K': x <<= 10; end++; break;
        case 'M': x <<= 20; end++; break;
        case 'G': x <<= 30; end++; break;
        default: return -1;
        }
        if (*end == 'B' || *end == 'b')
            end++;
        if (*end)
            return -1;
        *(size_t *)field = (size_t)x;
        return 0;
    }
    case PLX_SET_BOOL:
        if (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") || !strcasecmp(v, "true"))
            *(int *)field = 1;
        else if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "off") || !strcasecmp(v, "false"))
            *(int *)field = 0;
        else
            return -1;
        return 0;
    case PLX_SET_STRING:
        if (strlen(v) >= s->len)
            return -1;
        strcpy((char *)field, v);
        return 0;
    }
    return -1;
}

int plx_config_load(char *err, size_t errlen)
{
    for (size_t i = 0; i < plx_nsettings; i++)
        plx_config_parse(&plx_settings[i], plx_settings[i].defval);
    for (size_t i = 0; i < plx_nsettings; i++) {
        const char *v = getenv(plx_settings[i].name);
        if (v && plx_config_parse(&plx_settings[i], v) != 0) {
            snprintf(err, errlen, "%s=\"%s\" is not a valid value (%s)", plx_settings[i].name, v,
                     plx_settings[i].help);
            return -1;
        }
    }
    return 0;
}

void plx_config_format(const struct plx_setting *s, char *buf, size_t len)
{
    const void *field = (const char *)&plx_config + s->offset;
    switch (s->type) {
    case PLX_SET_INT:
    case PLX_SET_BOOL:
        snprintf(buf, len, "%d", *(const int *)field);
        break;
    case PLX_SET_SIZE:
        snprintf(buf, len, "%zu", *(const size_t *)field);
        break;
    case PLX_SET_STRING:
        snprintf(buf, len, "%s", (const char *)field);
        break;
    }
}
