/**
 * `DeepReadonly<T>`: the type of a record that nobody may change. Stored records are replaced on every change,
 * never mutated in place, and readers keep them (caches keyed by record object, shared empty maps), so the types
 * they are handed out as say so all the way down. Purely a type: nothing is frozen at run time.
 */

/** `T` with every property, array element, map and set entry read-only, recursively. Functions stay as they are. */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends ReadonlyMap<infer K, infer V>
    ? ReadonlyMap<DeepReadonly<K>, DeepReadonly<V>>
    : T extends ReadonlySet<infer V>
      ? ReadonlySet<DeepReadonly<V>>
      : T extends readonly unknown[]
        ? { readonly [I in keyof T]: DeepReadonly<T[I]> }
        : T extends object
          ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
          : T

/** `T` with its own properties writable (one level only): for building a message or an input field by field. */
export type Writable<T> = { -readonly [K in keyof T]: T[K] }
