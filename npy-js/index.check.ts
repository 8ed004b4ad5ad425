// index.d.ts checked against the implementation: `tsc -p .` (cargo xtask js --test) fails
// when an export, or a public member of an exported class, has another type in index.d.ts
// than in the JSDoc of js/ (each assignable to the other, parameters both ways, `any` only
// where the other has `any`), or when one side has an export or member the other lacks.
// The data types (options, dtypes, values) are index.d.ts's alone: the JSDoc names them.

import type * as D from "./index.d.ts";
import type * as I from "./js/api.js";

/**
 * `T` with the implementation's classes as index.d.ts declares them (their instances differ
 * only by the implementation's private fields) and its functions' parameters compared
 * both ways (as function types, not methods, whose parameters TypeScript compares one way).
 */
type Plain<T> = T extends I.NpyArray | D.NpyArray
  ? D.NpyArray
  : T extends I.NpyFile | D.NpyFile
    ? D.NpyFile
    : T extends I.NpzFile | D.NpzFile
      ? D.NpzFile
      : T extends I.NpzArchive | D.NpzArchive
        ? D.NpzArchive
        : T extends I.NpzWriter | D.NpzWriter
          ? D.NpzWriter
          : T extends (...args: infer P) => infer R
            ? (...args: { [K in keyof P]: Plain<P[K]> }) => Plain<R>
            : T extends Promise<infer U>
              ? Promise<Plain<U>>
              : T extends Iterator<infer U>
                ? Iterator<Plain<U>>
                : string extends keyof T
                  ? { [K in keyof T]: Plain<T[K]> }
                  : T;

type IsAny<T> = 0 extends 1 & T ? true : false;
/** Whether `A` and `B` are the same type: each assignable to the other, neither `any` alone. */
type Same<A, B> = IsAny<A> extends IsAny<B> ? ([Plain<A>] extends [Plain<B>] ? ([Plain<B>] extends [Plain<A>] ? true : false) : false) : false;

/** Per public member of `A` and `B`: `true` when its type is the same in both, else what differs. */
type Members<A, B> = {
  [K in keyof A | keyof B]: K extends keyof A
    ? K extends keyof B
      ? Same<A[K], B[K]>
      : "declared, not implemented"
    : "implemented, not declared";
};

/** A tsc error naming an entry of `T` that is not `true`. */
function same<T extends Record<string, true>>(_: T) {}
const all = <T>() => ({}) as T;

// The functions, and every export on both sides.
same<Members<Pick<typeof D, "load" | "save" | "loadNpz" | "open">, Pick<typeof I, "load" | "save" | "loadNpz" | "open">>>(all());
same<Members<Record<keyof typeof D, true>, Record<keyof typeof I, true>>>(all());

// The classes: their instances' public members, and the constructors callers may call.
same<Members<D.NpyError, I.NpyError>>(all());
same<Members<D.NpyArray, I.NpyArray>>(all());
same<Members<D.NpzArchive, I.NpzArchive>>(all());
same<Members<D.NpzWriter, I.NpzWriter>>(all());
same<Members<D.NpyFile, I.NpyFile>>(all());
same<Members<D.NpzFile, I.NpzFile>>(all());
same<{
  NpyError: Same<ConstructorParameters<typeof D.NpyError>, ConstructorParameters<typeof I.NpyError>>;
  NpzWriter: Same<ConstructorParameters<typeof D.NpzWriter>, ConstructorParameters<typeof I.NpzWriter>>;
}>(all());
