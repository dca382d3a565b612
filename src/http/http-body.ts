/**
 * Bodies the app renders as bytes (large lists: hundreds of KiB), written by the listener without copies.
 *
 * Every large fresh buffer brings the next garbage collection closer, and with the scenario's heap a collection
 * pauses the process for a millisecond or more. So a large body is rendered into a buffer borrowed from a small
 * pool, kept beside its Response (the Response itself carries a stream over the same bytes, for anyone else who
 * reads it), and given back once the listener has finished writing it. A buffer whose answer was never finished
 * (a closed connection, a Response read another way) is not given back; the collector takes it.
 */

/** Bodies below this size are ordinary allocations. */
export const POOLED_MIN_BYTES = 64 * 1024
/** Buffers kept per size class: more than the answers a 2-core process writes at the same time. */
const KEPT_PER_CLASS = 8

const free = new Map<number, Uint8Array[]>()

export interface BodyBytes {
  bytes: Uint8Array
  /** Gives a pooled buffer back; call once the bytes have been written (no-op for unpooled ones). */
  release(): void
}

const noop = () => {}

/** Bytes that are not pooled (nothing to give back). */
export function ownedBytes(bytes: Uint8Array): BodyBytes {
  return { bytes, release: noop }
}

/** A buffer of exactly `size` bytes to render a body into. */
export function borrowBytes(size: number): BodyBytes {
  if (size < POOLED_MIN_BYTES) return ownedBytes(new Uint8Array(size))
  const capacity = 2 ** Math.ceil(Math.log2(size))
  const store = free.get(capacity)?.pop() ?? new Uint8Array(capacity)
  let given = false
  return {
    bytes: store.subarray(0, size),
    release() {
      if (given) return
      given = true
      let list = free.get(capacity)
      if (!list) free.set(capacity, (list = []))
      if (list.length < KEPT_PER_CLASS) list.push(store)
    },
  }
}

const rendered = new WeakMap<Response, BodyBytes>()

export function bytesResponse(body: BodyBytes, init: ResponseInit): Response {
  // a stream hands the bytes out only when someone reads it: constructing a Response from bytes would copy them
  const res = new Response(
    new ReadableStream({
      pull(controller) {
        controller.enqueue(body.bytes.slice())
        controller.close()
      },
    }, { highWaterMark: 0 }), // pull on the first read, not at once
    init,
  )
  rendered.set(res, body)
  return res
}

/**
 * A Response over bytes that are not pooled, for small answers (the Response may copy them; large ones go through
 * `bytesResponse`): the listener writes these bytes as they are, without reading the body back out of the Response.
 */
export function ownedBytesResponse(bytes: Uint8Array, init: ResponseInit): Response {
  const res = new Response(bytes, init)
  rendered.set(res, ownedBytes(bytes))
  return res
}

/** The bytes a Response was made from with `bytesResponse` or `ownedBytesResponse`, if it was. */
export function renderedBody(res: Response): BodyBytes | undefined {
  return rendered.get(res)
}
