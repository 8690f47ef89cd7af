#!/bin/bash
# mpirun's rank wrapper for the CephFS testbed (deploy/testbed/cephfs.sh):
# rank r runs in client host r+1's UTS and mount namespaces, so that every
# rank sees its own ceph-fuse mount at the same path, as Lockstep's agents
# do. Used by cephfs_vs_ior.sh and cephfs_mdtest_ab.sh:
#   mpirun ... tests/bench/testbed_rank.sh /opt/ior/bin/ior ARGS...
T="${LOCKSTEP_TESTBED_DIR:-/tmp/lockstep-testbed}"
h=client$((OMPI_COMM_WORLD_RANK + 1))
exec nsenter --uts="$T/ns/$h.uts" --mount="$T/ns/$h.mnt" "$@"
