// GPU view (trace6.md §12.3): Nsight status, coverage, diagnostics, limits, NVTX join, summaries, or the
// reason the evidence is unavailable. Candle and Nsight clocks are separate and the UI says so.
import { el, fields, section, table } from '../dom.js';
import { formatInt, formatNsAsMs } from '../format.js';

export function renderGpu(panel, payload) {
  const gpu = payload.views.gpu || { status: 'unavailable' };
  panel.append(el('h1', null, 'GPU'));
  panel.append(
    el(
      'div',
      { class: `trust ${gpu.status === 'available' ? 'trusted' : 'untrusted'}`, id: 'gpu-status' },
      el('strong', null, `Nsight evidence: ${gpu.status}`),
      gpu.reason ? ` — ${gpu.reason}` : '',
    ),
  );
  if (gpu.status !== 'available') {
    panel.append(
      el(
        'p',
        null,
        'No GPU claims are made for this run. Capture with nsys and pass --nsight-dir to add them.',
      ),
    );
  }
  const cov = gpu.coverage || {};
  const corr = gpu.correlation || {};
  panel.append(
    section(
      'Coverage',
      fields(Object.entries(cov).map(([k, v]) => [k.replaceAll('_', ' '), v ? 'yes' : 'no'])),
    ),
  );
  panel.append(
    section(
      'NVTX join',
      el(
        'p',
        { class: 'note' },
        'Candle and Nsight clocks are separate: durations are compared, timestamps are not aligned.',
      ),
      fields([
        ['Mode', corr.mode ?? 'none'],
        ['Complete', String(!!corr.complete)],
        [
          'Matched ranges',
          `${formatInt(corr.matched_ranges ?? 0)} of ${formatInt(corr.total_ranges ?? 0)}`,
        ],
        ['Status', corr.reason ?? '–'],
      ]),
    ),
  );
  if ((gpu.diagnostics || []).length) {
    panel.append(
      section(
        'Parser diagnostics',
        el(
          'ul',
          null,
          gpu.diagnostics.map((d) => el('li', null, d)),
        ),
      ),
    );
  }
  const limits = Object.entries(gpu.limits || {});
  if (limits.length) {
    panel.append(
      section(
        'Row limits',
        table(
          [
            { label: 'File', value: ([k]) => k },
            { label: 'Rows', value: ([, l]) => formatInt(l.total_rows), num: true },
            { label: 'Shown', value: ([, l]) => formatInt(l.displayed_rows), num: true },
            { label: 'Truncated', value: ([, l]) => String(l.truncated) },
          ],
          limits,
        ),
      ),
    );
  }
  const summary = (title, rows) =>
    section(
      `${title} (global, whole capture)`,
      table(
        [
          { label: 'Name', value: (r) => r.name },
          { label: 'Total', value: (r) => formatNsAsMs(r.total_ns), num: true },
          { label: 'Count', value: (r) => formatInt(r.count), num: true },
          { label: 'Average', value: (r) => formatNsAsMs(r.average_ns), num: true },
          { label: 'Min', value: (r) => formatNsAsMs(r.minimum_ns), num: true },
          { label: 'Max', value: (r) => formatNsAsMs(r.maximum_ns), num: true },
        ],
        rows,
        { empty: 'Not captured.' },
      ),
    );
  panel.append(
    summary('Kernels', gpu.kernels),
    summary('CUDA API calls', gpu.runtime_calls),
    summary('Memory operations', gpu.memory_operations),
  );
  panel.append(
    section(
      'Projected NVTX ranges',
      table(
        [
          { label: 'Range', value: (r) => r.name },
          { label: 'Semantic key', value: (r) => r.semantic_key ?? '–' },
          {
            label: 'Projected duration',
            value: (r) => formatNsAsMs(r.projected_duration_ns ?? r.duration_ns),
            num: true,
          },
          { label: 'GPU ops', value: (r) => formatInt(r.gpu_operations ?? 0), num: true },
        ],
        gpu.nvtx_ranges,
        { empty: 'Not captured.' },
      ),
    ),
  );
}
