/**
 * The one place that binds pkijs to WebCrypto (`globalThis.crypto`), once per process.
 * Every pki-* module imports `engine` from here and passes it explicitly to pkijs.
 */
import { CryptoEngine, setEngine, type ICryptoEngine } from 'pkijs'

/**
 * The pkijs crypto engine over Bun's WebCrypto; pass it to every pkijs call that signs, verifies or imports.
 * Typed through a cast: pkijs 4 declares ICryptoEngine as a full SubtleCrypto, and this SubtleCrypto type has
 * members (encapsulateKey, …) that pkijs's CryptoEngine does not declare; no pkijs path we use calls them.
 */
export const engine = new CryptoEngine({ name: 'edgeplane-webcrypto', crypto: globalThis.crypto }) as unknown as ICryptoEngine
setEngine('edgeplane-webcrypto', engine)

/** WebCrypto's SubtleCrypto, for the few calls pkijs does not wrap. */
export const subtle: SubtleCrypto = globalThis.crypto.subtle
