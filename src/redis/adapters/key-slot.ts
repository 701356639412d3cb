const SLOTS = 16_384;
const encoder = new TextEncoder();

/** CRC16/XMODEM (polynomial 0x1021, initial value 0), the checksum Redis Cluster hashes keys with. */
function crc16(bytes: Uint8Array, start: number, end: number): number {
  let crc = 0;
  for (let i = start; i < end; i++) {
    crc ^= (bytes[i] as number) << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/**
 * The slot of `key` (taken as UTF-8): the CRC16 of its hash tag (what lies
 * between the first `{` and the next `}`, when that is not empty), or of the
 * whole key, modulo 16384.
 */
export function keySlot(key: string): number {
  const bytes = encoder.encode(key);
  const open = bytes.indexOf(0x7b);
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) return crc16(bytes, open + 1, close) % SLOTS;
  }
  return crc16(bytes, 0, bytes.length) % SLOTS;
}
