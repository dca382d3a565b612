// The instant the tests' fake clocks start at: midnight UTC of the day the run started. A fixed date would issue
// the test servers' certificates (a year of validity from the fake clock) that the real clock, which TLS clients and
// `edgeplane status` read, finds expiring and then expired as the calendar moves on.
const DAY_MS = 86_400_000

/** Midnight UTC of the day this test run started, in epoch ms; stable for the whole run. */
export const TEST_EPOCH_MS = Math.floor(Date.now() / DAY_MS) * DAY_MS
