// Number formatting shared by every view. Raw nanoseconds and bytes stay in the payload.

export function formatMs(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  if (ms !== 0 && Math.abs(ms) < 0.01) return `${(ms * 1000).toFixed(2)} µs`;
  return `${ms.toFixed(2)} ms`;
}

export const formatNsAsMs = (ns) => formatMs(ns / 1e6);

// Characters of trace text that are shown as escapes, as the Markdown report shows them
// (src/output/visible_text.cpp): C0 controls and DEL, C1 controls, and the bidirectional
// controls, which reorder the text around them so that a name reads as another
// (`abc\u202Efdp.exe` shows as `abcexe.pdf`). The payload keeps the names exact.
// eslint-disable-next-line no-control-regex -- finding control characters is its one job
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const SHORT_ESCAPES = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const hex = (code, digits) => code.toString(16).padStart(digits, '0');
function escapeInvisible(c) {
  const code = c.charCodeAt(0);
  if (SHORT_ESCAPES[c]) return SHORT_ESCAPES[c];
  return code < 0x20 || code === 0x7f ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`;
}
/** Text from a trace as it is shown: every control character as an escape, the rest unchanged. */
export function visibleText(text) {
  const s = String(text);
  INVISIBLE.lastIndex = 0;
  return INVISIBLE.test(s) ? s.replace(INVISIBLE, escapeInvisible) : s;
}

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

const DURATION_UNITS = [
  [1e9, 's'],
  [1e6, 'ms'],
  [1e3, 'µs'],
  [1, 'ns'],
];
/**
 * A duration in nanoseconds with three significant digits and its own unit ("812 µs", "1.23 s"),
 * for table columns that must stay narrow; the exact value goes into the cell's tooltip.
 */
export function formatDuration(ns) {
  if (ns === null || ns === undefined || !Number.isFinite(ns)) return '–';
  const abs = Math.abs(ns);
  let i = DURATION_UNITS.findIndex(([scale]) => abs >= scale);
  if (i < 0) i = DURATION_UNITS.length - 1; // 0 ns
  // 999.7 µs rounds to three digits as "1000 µs": it reads "1.00 ms" instead.
  if (i > 0 && abs / DURATION_UNITS[i][0] >= 999.5) i--;
  const [scale, unit] = DURATION_UNITS[i];
  const v = ns / scale;
  // Digits chosen on the rounded value, so 99.99 µs reads "100 µs", not "100.0 µs".
  const digits = unit === 'ns' || Math.abs(v) >= 99.95 ? 0 : Math.abs(v) >= 9.995 ? 1 : 2;
  return `${v.toFixed(digits)} ${unit}`;
}

/** part ÷ whole as a share ("12.3%", "<0.1%"), or "–" when there is no whole to share. */
export function formatShare(part, whole) {
  if (!whole || part === null || part === undefined) return '–';
  const p = (100 * part) / whole;
  if (p > 0 && p < 0.1) return '<0.1%';
  return `${p.toFixed(1)}%`;
}

// A device with its GPU's model when the trace names it: "cuda:3 (NVIDIA A100-PG509-200)", as the
// report and `compare` write it.
export const deviceWithModel = (device, model) => (model ? `${device} (${model})` : device);

// A device stream as the Chrome export names it: Kineto writes -1 as a 32-bit stream
// (4294967295) for work on no stream (a context sync), and the lane of a string tid has bit 62
// set, a number that means nothing.
export function streamName(stream) {
  if (stream === null || stream === undefined) return 'no stream';
  if (stream === 4294967295) return 'device-wide';
  if (stream >= 2 ** 62) return 'stream (unnumbered)';
  return `stream ${stream}`;
}
