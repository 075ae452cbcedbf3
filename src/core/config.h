/*
 * The one table of PLEXUS_* settings: name, type, default, one-line help.
 * Read once at MPI_Init (plx_config_load); plexus-info prints the table.
 * To add a setting: add a field to struct plx_config and a row in config.c.
 */
#ifndef PLX_CONFIG_H
#define PLX_CONFIG_H

#include <stddef.h>

struct plx_config {
    int debug;                  /* PLEXUS_DEBUG */
    char transports[128];       /* PLEXUS_TRANSPORTS */
    char node_name[256];        /* PLEXUS_NODE_NAME */
    size_t shm_ring_size;       /* PLEXUS_SHM_RING_SIZE */
    size_t shm_eager_max;       /* PLEXUS_SHM_EAGER_MAX */
    size_t shm_eager_credit;    /* PLEXUS_SHM_EAGER_CREDIT */
    size_t shm_frag_size;       /* PLEXUS_SHM_FRAG_SIZE */
    int shm_cma;                /* PLEXUS_SHM_CMA */
    size_t shm_coop_min;        /* PLEXUS_SHM_COOP_MIN */
    char shm_align[8];          /* PLEXUS_SHM_ALIGN */
    char bind[16];              /* PLEXUS_BIND (used by mpiexec) */
    int spin_count;             /* PLEXUS_SPIN_COUNT */
    int yield_count;            /* PLEXUS_YIELD_COUNT */
    int stats;                  /* PLEXUS_STATS */
    char ifaces[256];           /* PLEXUS_IFACES */
    size_t tcp_eager_max;       /* PLEXUS_TCP_EAGER_MAX */
    size_t tcp_eager_credit;    /* PLEXUS_TCP_EAGER_CREDIT */
    char tcp_ports[32];         /* PLEXUS_TCP_PORTS */
    int tcp_connect_timeout;    /* PLEXUS_TCP_CONNECT_TIMEOUT, seconds */
    int tcp_peer_timeout;       /* PLEXUS_TCP_PEER_TIMEOUT, seconds */
    size_t tcp_sockbuf;         /* PLEXUS_TCP_SOCKBUF */
    size_t tcp_sendq_max;       /* PLEXUS_TCP_SENDQ_MAX */
    int coll_shm;               /* PLEXUS_COLL_SHM */
    size_t coll_shm_max;        /* PLEXUS_COLL_SHM_MAX */
    char coll_oversub[8];       /* PLEXUS_COLL_OVERSUB */
    char route[512];            /* PLEXUS_ROUTE */
    size_t route_stripe_min;    /* PLEXUS_ROUTE_STRIPE_MIN */
    size_t route_chunk;         /* PLEXUS_ROUTE_CHUNK */
    int route_extra_peers;      /* PLEXUS_ROUTE_EXTRA_PEERS */
    size_t route_extra_bytes;   /* PLEXUS_ROUTE_EXTRA_BYTES */
    int tcp_rails;              /* PLEXUS_TCP_RAILS */
    int tcp_rail_timeout;       /* PLEXUS_TCP_RAIL_TIMEOUT, seconds */
    size_t io_cb_buffer_size;   /* PLEXUS_IO_CB_BUFFER_SIZE */
    int io_cb_nodes;            /* PLEXUS_IO_CB_NODES */
    char pmi[8];                /* PLEXUS_PMI */
    int async_progress;         /* PLEXUS_ASYNC_PROGRESS (issue 12) */
    /* issue 15: shared memory that grows with the peers used */
    size_t shm_queue_size;      /* PLEXUS_SHM_QUEUE_SIZE */
    int shm_fast_rings;         /* PLEXUS_SHM_FAST_RINGS */
    int shm_fast_after;         /* PLEXUS_SHM_FAST_AFTER */
    char test_die_at[64];       /* PLEXUS_TEST_DIE_AT */
    int test_zcopy_fail;        /* PLEXUS_TEST_ZCOPY_FAIL */
    int rma_shm;                /* PLEXUS_RMA_SHM */
    /* the SCTP transport (issue 13) */
    int sctp_streams;           /* PLEXUS_SCTP_STREAMS */
    size_t sctp_frag;           /* PLEXUS_SCTP_FRAG */
    size_t sctp_eager_max;      /* PLEXUS_SCTP_EAGER_MAX */
    size_t sctp_eager_credit;   /* PLEXUS_SCTP_EAGER_CREDIT */
    int sctp_mtu;               /* PLEXUS_SCTP_MTU */
    int sctp_mtu_local;         /* PLEXUS_SCTP_MTU_LOCAL */
    int sctp_cmt;               /* PLEXUS_SCTP_CMT */
    int sctp_connect_timeout;   /* PLEXUS_SCTP_CONNECT_TIMEOUT, seconds */
    size_t sctp_sockbuf;        /* PLEXUS_SCTP_SOCKBUF */
    int sctp_assoc_retrans;     /* PLEXUS_SCTP_ASSOC_RETRANS */
    size_t sctp_pace;           /* PLEXUS_SCTP_PACE */
    int sctp_unbind;            /* PLEXUS_SCTP_UNBIND */
    char sctp_threads[8];       /* PLEXUS_SCTP_THREADS: auto, on, off */
    /* issue 14: the libfabric transport */
    char ofi_provider[64];      /* PLEXUS_OFI_PROVIDER */
    size_t ofi_eager_max;       /* PLEXUS_OFI_EAGER_MAX */
    size_t ofi_eager_credit;    /* PLEXUS_OFI_EAGER_CREDIT */
    char ofi_mr_cache[8];       /* PLEXUS_OFI_MR_CACHE */
    char rma_fabric_locks[8];   /* PLEXUS_RMA_FABRIC_LOCKS (issue 14) */
    /* issue 14, session 8: the ofi transport's RDMA fast path */
    char ofi_fp[8];             /* PLEXUS_OFI_FASTPATH */
    int ofi_fp_peers;           /* PLEXUS_OFI_FASTPATH_PEERS */
    int ofi_fp_after;           /* PLEXUS_OFI_FASTPATH_AFTER */
    int ofi_fp_slots;           /* PLEXUS_OFI_FASTPATH_SLOTS */
    size_t ofi_fp_slot;         /* PLEXUS_OFI_FASTPATH_SLOT */
    /* issue 14, session 9: accumulates as native fabric atomics */
    char rma_native_acc[8];     /* PLEXUS_RMA_NATIVE_ACC */
    int ofi_fp_evict;           /* PLEXUS_OFI_FASTPATH_EVICT */
    /* issues 15 and 16, session 9 */
    char shm_segments[8];       /* PLEXUS_SHM_SEGMENTS */
};

extern struct plx_config plx_config;

enum plx_setting_type { PLX_SET_INT, PLX_SET_SIZE, PLX_SET_BOOL, PLX_SET_STRING };

/* When a change of a setting takes effect, which MPI_T reports as the
 * control variable's scope (and allows writes by): most are read once at
 * MPI_Init; a live one is read where it is used, so a new value counts from
 * then on, in this process (LOCAL) or, when every process must agree, once
 * all have set it (ALL_EQ). */
enum plx_setting_live { PLX_LIVE_NO = 0, PLX_LIVE_LOCAL, PLX_LIVE_ALL_EQ };

struct plx_setting {
    const char *name;
    enum plx_setting_type type;
    const char *defval;
    const char *help;
    size_t offset;              /* into struct plx_config */
    size_t len;                 /* for strings */
    enum plx_setting_live live; /* PLX_SET rows: PLX_LIVE_NO; PLX_SET_LIVE rows say */
};

extern const struct plx_setting plx_settings[];
extern const size_t plx_nsettings;

/* Applies defaults then the environment. Returns 0, or -1 with a message in
 * err naming the bad variable and value. */
int plx_config_load(char *err, size_t errlen);
/* Current value of setting i as text. */
void plx_config_format(const struct plx_setting *s, char *buf, size_t len);

#endif
