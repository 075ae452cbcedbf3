/* tools/mpiexec/hosts.c: the hosts and slots of a Slurm allocation
 * (plx_hosts_add_slurm), as mpiexec reads them inside sbatch/salloc. */
#include <string.h>
#include "hosts.h"
#include "test_util.h"

static void expect(const char *nodes, const char *per, int n, const char *const *names, const int *slots)
{
    struct plx_hostlist hl = { 0 };
    char err[256] = "";
    int rc = plx_hosts_add_slurm(&hl, nodes, per, err, sizeof err);
    T_CHECK(rc == 0, "%s / %s: %s", nodes, per ? per : "(null)", err);
    T_CHECK(hl.n == n, "%s: %d hosts, expected %d", nodes, hl.n, n);
    for (int i = 0; i < n && i < hl.n; i++) {
        T_CHECK(strcmp(hl.h[i].name, names[i]) == 0, "%s: host %d is %s, expected %s", nodes, i, hl.h[i].name,
                names[i]);
        T_CHECK(hl.h[i].slots == slots[i], "%s: host %s has %d slots, expected %d", nodes, names[i],
                hl.h[i].slots, slots[i]);
    }
    plx_hosts_free(&hl);
}

static void refuse(const char *nodes, const char *per)
{
    struct plx_hostlist hl = { 0 };
    char err[256] = "";
    T_CHECK(plx_hosts_add_slurm(&hl, nodes, per, err, sizeof err) != 0 && err[0], "%s / %s accepted", nodes,
            per ? per : "(null)");
    plx_hosts_free(&hl);
}

int main(void)
{
    expect("vm", "4", 1, (const char *[]){ "vm" }, (const int[]){ 4 });
    expect("node[01-03]", "2(x3)", 3, (const char *[]){ "node01", "node02", "node03" }, (const int[]){ 2, 2, 2 });
    expect("n[1-2,7],gpu-a", "3(x2),1,5", 4, (const char *[]){ "n1", "n2", "n7", "gpu-a" },
           (const int[]){ 3, 3, 1, 5 });
    expect("a[08-10]x", NULL, 3, (const char *[]){ "a08x", "a09x", "a10x" }, (const int[]){ 1, 1, 1 });
    expect("h1,h2", "2", 2, (const char *[]){ "h1", "h2" }, (const int[]){ 2, 1 });
    refuse("node[1-", "1");
    refuse("node[3-1]", "1");
    refuse("node1", "x");
    refuse("node1", "2(x");
    T_DONE("mpiexec_hosts");
}
