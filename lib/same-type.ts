// A compile-time tie between two types: `Same<A, B>` is `true` when they are the same type and
// `never` otherwise, so `const tie: Same<A, B> = true` does not compile once they drift apart.

export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
