// The values the rate-limit headers carry, free of any policy: a wait in whole
// seconds (for `Retry-After` and the draft's `t`) and a policy name as a
// structured-field String (RFC 9651).

/**
 * Whole seconds to wait, rounded up, for `Retry-After` and the draft's `t`: 0
 * only when there is nothing to wait for (1 ms is 1 s, 1001 ms is 2 s).
 */
export function retryAfterSeconds(milliseconds: number): number {
  if (!(milliseconds > 0)) return 0; // also NaN
  if (!Number.isFinite(milliseconds)) return Number.MAX_SAFE_INTEGER;
  return Math.max(1, Math.ceil(milliseconds / 1000));
}

/**
 * Serializes a policy name as a structured-field String (RFC 9651 section
 * 4.1.6): printable ASCII, with `"` and `\` escaped; anything else (control
 * characters, non-ASCII) is percent-encoded as UTF-8 first, since a String
 * cannot carry it.
 */
export function toStructuredString(name: string): string {
  let body = '';
  for (const char of name) {
    const code = char.codePointAt(0) ?? 0;
    if (char === '"' || char === '\\') body += `\\${char}`;
    else if (code >= 0x20 && code <= 0x7e) body += char;
    else body += percentEncode(char);
  }
  return `"${body}"`;
}

function percentEncode(char: string): string {
  let encoded = '';
  // A lone surrogate encodes as U+FFFD, which is still unambiguous text.
  for (const byte of new TextEncoder().encode(char)) encoded += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return encoded;
}
