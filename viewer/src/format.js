// Number formatting shared by every view. Raw nanoseconds and bytes stay in the payload.

export function formatMs(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  if (ms !== 0 && Math.abs(ms) < 0.01) return `${(ms * 1000).toFixed(2)} µs`;
  return `${ms.toFixed(2)} ms`;
}

export const formatNsAsMs = (ns) => formatMs(ns / 1e6);

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
/** "10,240 B" for small values, "1,048,576 B (1.00 MiB)" above 1 KiB: exact first, then readable. */
export function formatBytes(bytes) {
  if (bytes === null || bytes === undefined) return '–';
  const exact = `${Number(bytes).toLocaleString('en-US')} B`;
  if (Math.abs(bytes) < 1024) return exact;
  let v = Math.abs(bytes);
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return `${exact} (${bytes < 0 ? '-' : ''}${v.toFixed(2)} ${UNITS[u]})`;
}

export function shortBytes(bytes) {
  let v = Math.abs(bytes);
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return `${bytes < 0 ? '-' : ''}${u === 0 ? v : v.toFixed(1)} ${UNITS[u]}`;
}

export const formatInt = (n) =>
  n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US');

export function formatShape(shape) {
  return Array.isArray(shape) ? `[${shape.join(', ')}]` : '–';
}

export function formatPercent(p) {
  return p === null || p === undefined ? 'n/a' : `${p >= 0 ? '+' : ''}${p.toFixed(2)}%`;
}
