/** The help text of the operations; its own module so `edgeplane --help` loads no storage code. */
export const OPERATE_HELP = `Operations:
  edgeplane backup --data DIR --out FILE      archive a data directory (the controller may be running on it)
  edgeplane restore --from FILE --data DIR    restore an archive into a new or empty directory, checked and migrated
  edgeplane status --data DIR [--json]        offline: schema version, record counts, sizes, certificate expiry
  edgeplane status --url URL [--json]         online: version, uptime, counts, health of a running controller
      --username NAME (EDGEPLANE_USERNAME)  --password PASS (EDGEPLANE_PASSWORD): an admin's login
      --ca FILE: PEM of the CA of the controller's certificate (default: the system's roots); --insecure: no check
`
