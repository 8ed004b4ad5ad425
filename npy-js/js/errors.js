// NpyError: every error the package throws, with the file (or URL) and member it concerns.

/**
 * An error of the npy package: `kind` says what went wrong (npy-core's kinds: `header`,
 * `dtype`, `npz`, `pickle`, `truncated`, `invalid_value`, `usage`, `io`..., and `internal`
 * for a bug of ours), `file` and `member` where, when known.
 */
export class NpyError extends Error {
  /**
   * @param {string} message
   * @param {{kind?: string, file?: string, member?: string, field?: string, cause?: unknown}} [details]
   */
  constructor(message, { kind = "other", file, member, field, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "NpyError";
    this.kind = kind;
    if (file !== undefined) this.file = file;
    if (member !== undefined) this.member = member;
    if (field !== undefined) this.field = field;
  }
}

/**
 * `reading 'name': what` when a name is known: npy-core's wording, for the package's own
 * errors.
 * @param {string | undefined} name
 * @param {string} what
 */
export function reading(name, what) {
  return name === undefined ? what : `reading '${name}': ${what}`;
}

/**
 * An NpyError from what the WebAssembly side threw (an Error with `kind` and maybe
 * `member`), naming `file` and `member` where the message does not already.
 * @param {unknown} e
 * @param {{file?: string, member?: string}} [where]
 */
export function translate(e, { file, member } = {}) {
  if (e instanceof NpyError) return e;
  if (e instanceof Error && typeof /** @type {any} */ (e).kind === "string") {
    const any = /** @type {any} */ (e);
    let message = e.message;
    const m = any.member ?? member;
    if (member !== undefined && any.member === undefined && !message.includes(`member '${member}'`)) {
      message = `member '${member}': ${message}`;
    }
    if (file !== undefined && !message.startsWith("reading '")) message = reading(file, message);
    return new NpyError(message, { kind: any.kind, file, member: m, field: any.field, cause: e });
  }
  return e;
}
