// SHA-1 in plain JavaScript, for the runtimes without `node:crypto` (Cloudflare
// Workers without `nodejs_compat`, Vercel's edge runtime), where the web's
// `crypto.subtle.digest` would answer only in a promise: it names a script as
// Redis does (FIPS 180-4, section 6.1), and is not for security. Run at most
// once per script and process, at its first use: about 10 ms for the 27 kB
// decide script on a cold V8, where Node's takes well under one (which is why
// redis-script.ts prefers `node:crypto` where there is one).

/** The SHA-1 of `text` (encoded as UTF-8), in lowercase hexadecimal: what Redis's `SCRIPT LOAD` answers for it. */
export function sha1Hex(text: string): string {
  const bytes = new TextEncoder().encode(text);
  const length = bytes.length;
  // The message, a 1 bit, zeros, and its length in bits as 64 bits: whole blocks of sixteen big-endian words
  // (an Int32Array keeps the low 32 bits of what it is given: the length's high word, then its low word).
  const words = new Int32Array((((length + 8) >>> 6) + 1) * 16);
  for (let i = 0; i < length; i += 1) words[i >> 2]! |= bytes[i]! << (24 - (i & 3) * 8);
  words[length >> 2]! |= 0x80 << (24 - (length & 3) * 8);
  words[words.length - 2] = length / 0x20000000;
  words[words.length - 1] = length * 8;

  const w = new Int32Array(80);
  let h0 = 0x67452301;
  let h1 = 0xefcdab89 | 0;
  let h2 = 0x98badcfe | 0;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0 | 0;
  for (let block = 0; block < words.length; block += 16) {
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    for (let t = 0; t < 80; t += 1) {
      let x = t < 16 ? words[block + t]! : w[t - 3]! ^ w[t - 8]! ^ w[t - 14]! ^ w[t - 16]!;
      if (t >= 16) x = (x << 1) | (x >>> 31);
      w[t] = x;
      const f =
        t < 20
          ? ((b & c) | (~b & d)) + 0x5a827999
          : t < 40
            ? (b ^ c ^ d) + 0x6ed9eba1
            : t < 60
              ? ((b & c) | (b & d) | (c & d)) + 0x8f1bbcdc
              : (b ^ c ^ d) + 0xca62c1d6;
      x = (((a << 5) | (a >>> 27)) + e + x + f) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = x;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
  }
  return [h0, h1, h2, h3, h4].map((h) => (h >>> 0).toString(16).padStart(8, '0')).join('');
}
