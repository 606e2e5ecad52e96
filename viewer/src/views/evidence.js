// Evidence view (trace6.md §12.3): trust status, provenance, coverage, facts, findings, gaps, tensors,
// gradients and baseline deltas.
import { el, fields, section, table } from '../dom.js';
import {
  formatBytes,
  formatInt,
  formatMs,
  formatNsAsMs,
  formatPercent,
  formatShape,
} from '../format.js';

export function renderEvidence(panel, payload) {
  const ev = payload.views.evidence;
  const health = ev.health;
  const prov = ev.provenance || {};
  const trusted = !!health.trusted;
  panel.append(
    el('h1', null, 'Evidence'),
    el(
      'div',
      { class: `trust ${trusted ? 'trusted' : 'untrusted'}`, id: 'trust-status' },
      el('strong', null, trusted ? 'TRUSTED' : 'UNTRUSTED'),
      trusted
        ? ' — the trace is structurally valid; the numbers below can be relied on.'
        : ' — the trace has structural errors; do not draw conclusions from it.',
    ),
    el(
      'div',
      { class: 'kpis' },
      kpi('Measured total', formatMs(payload.summary.total_ms)),
      kpi('Memory peak', formatBytes(payload.summary.memory.peak_bytes), 'kpi-peak'),
      kpi('Phase', payload.summary.phase),
      kpi('Device', prov.device ?? '–'),
    ),
  );
  panel.append(section('Findings', list(ev.findings, 'No trusted findings were derived.')));
  panel.append(section('Evidence gaps', list(ev.gaps, 'No known gaps.')));
  if (health.issues && health.issues.length) {
    panel.append(
      section(
        'Health issues',
        table(
          [
            { label: 'Severity', value: (i) => i.severity },
            { label: 'Code', value: (i) => el('code', null, i.code) },
            { label: 'Message', value: (i) => i.message },
          ],
          health.issues,
        ),
      ),
    );
  }
  const tags = prov.tags || {};
  panel.append(
    section(
      'Provenance',
      fields([
        ['Entrypoint', el('code', null, prov.entrypoint ?? '–')],
        ['Run id', prov.run_id ?? '–'],
        ['Correlation id', prov.correlation_id ?? '–'],
        ['Phase', prov.phase ?? '–'],
        ['Timestamp', prov.timestamp ?? '–'],
        ['Capture update', `${prov.capture_step ?? '–'} (${prov.warmup_steps ?? 0} warmup)`],
        ['Timing mode', prov.timing_mode ?? '–'],
        ['Measured region device-synchronized', String(!!prov.measured_region_device_synchronized)],
        ...Object.keys(tags)
          .sort()
          .map((k) => [`tag ${k}`, tags[k]]),
      ]),
    ),
  );
  const coverage = health.coverage || {};
  panel.append(
    section(
      'Coverage',
      el(
        'div',
        { class: 'coverage' },
        Object.entries(coverage).map(([k, v]) =>
          el(
            'div',
            { class: 'cov' },
            el('span', { class: 'cov-n' }, formatInt(v)),
            el('span', null, k.replaceAll('_', ' ')),
          ),
        ),
      ),
    ),
  );
  panel.append(
    section(
      'Facts',
      table(
        [
          { label: 'Fact', value: (f) => f.label },
          {
            label: 'Value',
            value: (f) => (f.unit === 'ns' ? formatNsAsMs(f.value) : `${f.value} ${f.unit}`),
            num: true,
          },
          { label: 'Code', value: (f) => el('code', null, f.code) },
          { label: 'Source', value: (f) => f.source },
        ],
        ev.facts,
      ),
    ),
  );
  if (ev.comparison) panel.append(renderComparison(ev.comparison));
  else
    panel.append(
      section(
        'Baseline comparison',
        el('p', { class: 'empty' }, 'No baseline was given (use view --baseline TRACE).'),
      ),
    );
  panel.append(
    section(
      'Tensor checkpoints',
      table(
        [
          { label: 'Tensor', value: (t) => el('code', null, t.tensor_id) },
          { label: 'Shape', value: (t) => formatShape(t.shape) },
          { label: 'Dtype', value: (t) => t.dtype },
          { label: 'Device', value: (t) => t.device },
          { label: 'Storage', value: (t) => formatBytes(t.storage_bytes), num: true },
          { label: 'Requires grad', value: (t) => String(t.requires_grad) },
          { label: 'Category', value: (t) => t.category },
        ],
        ev.tensors,
        { empty: 'No tensor checkpoints were captured.' },
      ),
    ),
  );
  const grads = ev.gradients || [];
  // Bounded payloads list at most a few thousand gradients; the totals come from payload_limits.
  const limits = payload.payload_limits || {};
  const total = limits.gradients_total ?? grads.length;
  const attention = limits.gradients_attention ?? grads.filter((g) => g.state !== 'present').length;
  panel.append(
    section(
      'Gradient evidence',
      el('p', null, `${total} parameter gradients captured; ${attention} require attention.`),
      total > grads.length
        ? el(
            'p',
            { class: 'note' },
            `Listing ${grads.length} of ${total}: those that need attention first.`,
          )
        : null,
      table(
        [
          { label: 'Root', value: (g) => g.root },
          { label: 'Parameter', value: (g) => el('code', null, g.key) },
          {
            label: 'State',
            value: (g) => el('span', { class: `state state-${g.state}` }, g.state),
          },
          {
            label: 'Norm',
            value: (g) => (g.norm === null || g.norm === undefined ? '–' : String(g.norm)),
            num: true,
          },
        ],
        sortAttentionFirst(grads),
        { empty: 'No gradient facts were captured.' },
      ),
    ),
  );
}

function kpi(label, value, id) {
  return el(
    'div',
    { class: 'kpi', id },
    el('span', { class: 'kpi-label' }, label),
    el('span', { class: 'kpi-value' }, value),
  );
}

function list(items, empty) {
  if (!items || items.length === 0) return el('p', { class: 'empty' }, empty);
  return el(
    'ul',
    null,
    items.map((t) => el('li', null, t)),
  );
}

function sortAttentionFirst(grads) {
  return [...grads].sort((a, b) => (a.state === 'present') - (b.state === 'present'));
}

function renderComparison(c) {
  return section(
    'Baseline comparison',
    el(
      'p',
      null,
      c.comparable ? 'The runs are comparable.' : 'The runs are NOT comparable: read the warnings.',
    ),
    fields([
      ['Baseline run', c.baseline_run_id],
      ['Candidate run', c.candidate_run_id],
      [
        'Total time change',
        `${formatNsAsMs(c.total_delta_ns)} (${formatPercent(c.total_delta_percent)})`,
      ],
      ['Peak memory change', formatBytes(c.peak_delta_bytes)],
    ]),
    list(
      (c.warnings || []).map((w) => `Warning: ${w}`),
      'No warnings.',
    ),
    table(
      [
        { label: 'Span', value: (s) => s.name },
        { label: 'Baseline', value: (s) => formatNsAsMs(s.baseline_total_ns), num: true },
        { label: 'Candidate', value: (s) => formatNsAsMs(s.candidate_total_ns), num: true },
        {
          label: 'Delta',
          value: (s) => `${formatNsAsMs(s.delta_ns)} (${formatPercent(s.delta_percent)})`,
          num: true,
        },
      ],
      c.spans,
      { empty: 'No span differences.' },
    ),
    table(
      [
        { label: 'Parameter', value: (g) => g.parameter },
        { label: 'Baseline', value: (g) => `${g.baseline_state ?? '–'} ${g.baseline_norm ?? ''}` },
        {
          label: 'Candidate',
          value: (g) => `${g.candidate_state ?? '–'} ${g.candidate_norm ?? ''}`,
        },
        {
          label: 'Norm delta',
          value: (g) => (g.norm_delta === null ? '–' : String(g.norm_delta)),
          num: true,
        },
      ],
      c.gradients,
      { empty: 'No gradient differences.' },
    ),
  );
}
