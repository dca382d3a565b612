/** The help text of `edgeplane cluster`; its own module so `edgeplane --help` loads no cluster code. */
export const CLUSTER_HELP = `Cluster (talks to etcd directly; no running node needed):
  edgeplane cluster status [--json]           etcd's members (health, leader, revision), the cluster id, etcd's
                                              compaction point, and every node: applied revision, lag, live or not
  edgeplane cluster remove NAME --data DIR [--force]
                                              retire a node: removes it from /controllers (a controller.remove
                                              command in the log) and deletes its keys, so compaction no longer waits
                                              for it; a live node is refused unless --force (stop it first). --data:
                                              a member's data directory (EDGEPLANE_DATA), whose key seals the command
      --cluster-endpoints URL[,URL...] (EDGEPLANE_CLUSTER_ENDPOINTS)  --prefix P (EDGEPLANE_CLUSTER_PREFIX, default
      /edgeplane)  --config FILE (EDGEPLANE_CONFIG): its cluster: section gives endpoints and prefix
  Exit codes: status 0 when etcd has a quorum and every registered node is live, else 1 (with why); remove 0 done,
  1 refused or failed; 2 usage error.
`
