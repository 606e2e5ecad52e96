// The Markdown of `report --markdown` and `ranks --markdown`, read by a third-party CommonMark
// parser with GFM's tables and strikethrough (npm markdown-it, pinned in package.json; raw HTML
// on, as GitHub parses it before sanitising). Names from a trace must render as the text they
// are: every finding and gap a list item whose text is the JSON's string (the backticks of the
// code spans it quotes names in aside), with no emphasis, link, HTML, heading or other markup
// inside; the document's headings only its own, each once; a table cell that names an op or a
// file holding exactly that name.
//
// Inputs: real traces (a DLRM rank: DataLoader's `__next__`; HTA's V100 run: torchrec's
// `## backward ##` ranges; AlexNet: `[param|cuda]`), and Kineto traces written here whose ranges
// and ops carry Markdown in their names. Expected texts come from the same run's JSON outputs.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import MarkdownIt from 'markdown-it';
import { assert, candleGraph, createRunner, parseArgs } from './harness.mjs';

const args = parseArgs(process.argv);
const run = createRunner();
const out = join(args.out, 'report-markdown');
mkdirSync(out, { recursive: true });
const KINETO = join(args.fixtures, 'pytorch-chrome-trace');
const DLRM = join(KINETO, 'ranks-param-dlrm-8rank-v100');
const parser = new MarkdownIt({ html: true });

const REPORT_HEADINGS = new Set([
  'candle-graph evidence',
  'Findings',
  'Evidence gaps',
  'Coverage',
  'Tensor checkpoints',
  'Gradient evidence',
  'Where the time went',
  'Memory at the peak',
  'GPU',
  'GPU from the trace',
  'Profiler steps',
  'Baseline comparison',
  'Against the baseline',
]);
const RANKS_HEADINGS = new Set([
  'Ranks',
  'Findings',
  'Health',
  'Per rank (measured region)',
  'Stragglers',
  'Clock alignment',
]);

// The rendered text of an inline token; anything but plain text and code spans is markup that a
// name put there.
function plainText(inline, where) {
  let text = '';
  for (const child of inline.children) {
    if (child.type === 'text' || child.type === 'code_inline') text += child.content;
    else throw new Error(`${where}: markup (${child.type}) in ${JSON.stringify(inline.content)}`);
  }
  return text;
}

// Anywhere in the document: the only markup in a line is the writer's own bold words; a link, an
// image, HTML, emphasis or a strikethrough came from a name.
const OWN_BOLD = new Set(['TRUSTED', 'UNTRUSTED', 'comparable', 'not comparable', 'not typical']);
function ownMarkupOnly(inline, where) {
  const children = inline.children;
  for (let k = 0; k < children.length; k++) {
    const type = children[k].type;
    if (type === 'strong_open' && OWN_BOLD.has(children[k + 1].content)) continue;
    if (!['text', 'code_inline', 'strong_close', 'softbreak'].includes(type))
      throw new Error(`${where}: markup (${type}) in ${JSON.stringify(inline.content)}`);
  }
}

// The document's structure: its headings in order; per section, its top-level list items (their
// block tokens, and the inline token of the first) and the inline tokens of its tables' rows.
// Our own text may hold markup (`**TRUSTED**`); the sections that hold names are read through
// plainText.
function structure(markdown, where) {
  const tokens = parser.parse(markdown, {});
  const headings = [];
  const sections = new Map();
  let section = null;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.type === 'heading_open') {
      if (t.level !== 0)
        throw new Error(`${where}: a heading inside a block: ${tokens[i + 1].content}`);
      section = { items: [], rows: [] };
      headings.push(tokens[i + 1].content);
      sections.set(tokens[i + 1].content, section);
    } else if (t.type === 'list_item_open' && t.level === 1) {
      const inner = [];
      let depth = 1;
      for (i++; depth > 0; i++) {
        if (tokens[i].type === 'list_item_open') depth++;
        if (tokens[i].type === 'list_item_close') depth--;
        if (depth > 0) inner.push(tokens[i]);
      }
      i--;
      section.items.push({ kinds: inner.map((x) => x.type).join(' '), inline: inner[1] });
    } else if (t.type === 'tr_open') {
      const row = [];
      for (i++; tokens[i].type !== 'tr_close'; i++)
        if (tokens[i].type === 'inline') row.push(tokens[i]);
      section.rows.push(row);
    } else if (t.type === 'inline') {
      ownMarkupOnly(t, where);
    } else if (['html_block', 'blockquote_open', 'hr', 'code_block'].includes(t.type)) {
      throw new Error(`${where}: a ${t.type} at line ${t.map && t.map[0] + 1}`);
    }
  }
  return { headings, sections };
}

function expectHeadings(headings, own, where) {
  const seen = new Set();
  for (const h of headings) {
    assert(own.has(h), `${where}: a heading the output does not write: ${JSON.stringify(h)}`);
    assert(!seen.has(h), `${where}: the heading ${JSON.stringify(h)} twice`);
    seen.add(h);
  }
}

// A finding as the list shows it: the JSON's string without the backticks of its code spans. A
// run of backticks opens a span only where a run of the same length closes it, and a space is
// stripped each side of a span that starts and ends with one (CommonMark §6.1: a name holding
// backticks is quoted with a longer fence and padded).
function shown(s) {
  const runAt = (at) => {
    let n = 0;
    while (s[at + n] === '`') n++;
    return n;
  };
  let text = '';
  for (let i = 0; i < s.length;) {
    if (s[i] !== '`') {
      text += s[i++];
      continue;
    }
    const n = runAt(i);
    let close = -1;
    for (let j = s.indexOf('`', i + n); j !== -1; j = s.indexOf('`', j + runAt(j)))
      if (runAt(j) === n) {
        close = j;
        break;
      }
    let inner = close === -1 ? s.slice(i, i + n) : s.slice(i + n, close);
    if (close !== -1 && inner.length > 2 && inner.startsWith(' ') && inner.endsWith(' '))
      inner = inner.slice(1, -1);
    text += inner;
    i = close === -1 ? i + n : close + n;
  }
  return text;
}

function expectList(items, expected, where) {
  const actual = items.map((item) => {
    if (item.kinds !== 'paragraph_open inline paragraph_close')
      throw new Error(`${where}: a list item that is not one paragraph: ${item.kinds}`);
    return plainText(item.inline, where);
  });
  assert(
    JSON.stringify(actual) === JSON.stringify(expected.map(shown)),
    `${where}: the list renders as ${JSON.stringify(actual)}, the JSON has ${JSON.stringify(expected)}`,
  );
}

function report(trace, name, extra = []) {
  const json = join(out, `${name}.evidence.json`);
  const md = join(out, `${name}.md`);
  candleGraph(args.binary, ['report', trace, '--json', json, '--markdown', md, ...extra]);
  const doc = structure(readFileSync(md, 'utf8'), name);
  expectHeadings(doc.headings, REPORT_HEADINGS, name);
  const evidence = JSON.parse(readFileSync(json, 'utf8'));
  expectList(doc.sections.get('Findings').items, evidence.findings, `${name} findings`);
  expectList(doc.sections.get('Evidence gaps').items, evidence.gaps, `${name} gaps`);
  const ops = new Set(
    JSON.parse(
      candleGraph(args.binary, ['query', trace, '--kind', 'ops', '--limit', '100000']),
    ).result.items.map((o) => o.name),
  );
  const table = doc.sections.get('Where the time went').rows;
  assert(table.length > 1, `${name}: no op table`);
  for (const row of table.slice(1)) {
    const cell = plainText(row[0], name);
    assert(ops.has(cell), `${name}: the op cell ${JSON.stringify(cell)} names no op`);
  }
  return doc;
}

// A Kineto trace whose ranges (one after another inside one step), the ops inside them and the
// kernels those launch are named `names`, the first range holding the most self time; the step's
// own time is the least.
function markdownNamedTrace(file, names) {
  const events = [];
  let ts = 1;
  names.forEach((name, i) => {
    const dur = 1000 - 40 * i;
    events.push({ ph: 'X', cat: 'user_annotation', name, pid: 1, tid: 1, ts, dur });
    events.push({
      ph: 'X',
      cat: 'cpu_op',
      name: `aten::${name}`,
      pid: 1,
      tid: 1,
      ts: ts + 1,
      dur: dur / 2,
    });
    // A kernel of the same name launched from the op: the GPU sections and kernel findings.
    const launch = { correlation: i + 1 };
    events.push({
      ph: 'X',
      cat: 'cuda_runtime',
      name: 'cudaLaunchKernel',
      pid: 1,
      tid: 1,
      ts: ts + 2,
      dur: 1,
      args: launch,
    });
    events.push({
      ph: 'X',
      cat: 'kernel',
      name,
      pid: 0,
      tid: 7,
      ts: ts + 10,
      dur: dur / 4,
      args: { ...launch, device: 0, stream: 7 },
    });
    ts += dur;
  });
  events.unshift({
    ph: 'X',
    cat: 'user_annotation',
    name: 'ProfilerStep#1',
    pid: 1,
    tid: 1,
    ts: 0,
    dur: ts + 1,
  });
  writeFileSync(file, JSON.stringify({ traceEvents: events }));
  return file;
}

const MARKDOWN_NAMES = [
  ['Module.__call__', '[docs](https://example.com)', '<!-- hidden', '## heading ##', '> quote'],
  ['*bold* and _it_', 'a|b ~~x~~ &amp; &#42;', '1. item', '<b>tag</b>', '- item'],
  ['![img](x.png)', '```fence', 'C:\\dir\\*x*', '___', '<https://example.com>'],
  ['    indented', '  two spaces', '&', '\\', '`code` and ``more``'],
];

await run.check('report: names with Markdown in them render as the text they are', () => {
  MARKDOWN_NAMES.forEach((names, k) => {
    const doc = report(markdownNamedTrace(join(out, `named-${k}.json`), names), `named-${k}`);
    // Each range leads a finding of its own ("NAME: … self time"), so every name was written (a
    // name's own backtick pairs render as code spans: their text, without the backticks).
    const findings = doc.sections.get('Findings').items.map((f) => plainText(f.inline, 'findings'));
    for (const name of names)
      assert(
        findings.some((f) => f.startsWith(`${shown(name)}: `)),
        `no finding names ${JSON.stringify(name)}`,
      );
  });
});

await run.check('report: a name holding backticks, quoted in a finding, renders whole', () => {
  // The host blocks in cudaStreamSynchronize for half the step inside a range whose name holds
  // backticks: the sync finding quotes the range's name.
  const name = 'my`span` | ``x``';
  const events = [
    { ph: 'X', cat: 'user_annotation', name: 'ProfilerStep#1', pid: 1, tid: 1, ts: 0, dur: 1000 },
    { ph: 'X', cat: 'user_annotation', name, pid: 1, tid: 1, ts: 10, dur: 900 },
    { ph: 'X', cat: 'cpu_op', name: 'aten::add', pid: 1, tid: 1, ts: 20, dur: 50 },
    {
      ph: 'X',
      cat: 'cuda_runtime',
      name: 'cudaLaunchKernel',
      pid: 1,
      tid: 1,
      ts: 25,
      dur: 5,
      args: { correlation: 1 },
    },
    {
      ph: 'X',
      cat: 'cuda_runtime',
      name: 'cudaStreamSynchronize',
      pid: 1,
      tid: 1,
      ts: 100,
      dur: 500,
      args: { correlation: 2 },
    },
    {
      ph: 'X',
      cat: 'kernel',
      name: 'k',
      pid: 0,
      tid: 7,
      ts: 40,
      dur: 550,
      args: { correlation: 1, device: 0, stream: 7 },
    },
  ];
  const file = join(out, 'backticks.json');
  writeFileSync(file, JSON.stringify({ traceEvents: events }));
  const doc = report(file, 'backticks');
  const findings = doc.sections.get('Findings').items.map((f) => plainText(f.inline, 'findings'));
  assert(
    findings.some((f) => f.includes(` cudaStreamSynchronize inside ${name} (1 calls`)),
    `no finding shows the range whole: ${JSON.stringify(findings)}`,
  );
});

await run.check('report: real traces (DLRM, torchrec ranges, AlexNet) render their names', () => {
  const dlrm = join(
    DLRM,
    readdirSync(DLRM).find((f) => f.startsWith('worker0_')),
  );
  const doc = report(dlrm, 'dlrm-rank0');
  assert(
    doc.sections
      .get('Findings')
      .items.some((f) =>
        plainText(f.inline, 'dlrm').includes('_SingleProcessDataLoaderIter.__next__'),
      ),
    'the DataLoader finding lost its underscores',
  );
  const v100 = report(join(KINETO, 'hta-tracediff-test-v100-nccl-6steps.json.gz'), 'v100');
  assert(
    v100.sections
      .get('Findings')
      .items.some((f) => plainText(f.inline, 'v100').startsWith('## backward ##: ')),
    'the torchrec range is not shown as written',
  );
  report(join(KINETO, 'hta-alexnet-a100-2streams.json.gz'), 'alexnet');
});

await run.check(
  'report --baseline: the warnings of the comparison render as the text they are',
  () => {
    // The entrypoint is the file's name: each side's is quoted in the warning that they differ.
    const candidate = join(out, '__init__ [a](b) <i>.json');
    writeFileSync(candidate, readFileSync(join(out, 'named-1.json')));
    const doc = report(candidate, 'against-baseline', ['--baseline', join(out, 'named-0.json')]);
    const warnings = JSON.parse(readFileSync(join(out, 'against-baseline.evidence.json'), 'utf8'))
      .comparison.warnings;
    assert(warnings.length > 0, 'no comparison warning');
    expectList(
      doc.sections.get('Baseline comparison').items,
      warnings.map((w) => `Warning: ${w}`),
      'baseline warnings',
    );
  },
);

await run.check('ranks: findings, health and file names render as the text they are', () => {
  const dir = join(out, 'ranks');
  mkdirSync(dir, { recursive: true });
  const files = ['worker0_', 'worker1_'].map((prefix, r) => {
    const source = join(
      DLRM,
      readdirSync(DLRM).find((f) => f.startsWith(prefix)),
    );
    const file = join(dir, `rank_${r}_[a](b)_*x*_<i>.json`);
    writeFileSync(file, readFileSync(source));
    return file;
  });
  const md = join(dir, 'ranks.md');
  const json = JSON.parse(candleGraph(args.binary, ['ranks', ...files, '--markdown', md]));
  const doc = structure(readFileSync(md, 'utf8'), 'ranks');
  expectHeadings(doc.headings, RANKS_HEADINGS, 'ranks');
  expectList(doc.sections.get('Findings').items, json.findings, 'ranks findings');
  expectList(
    doc.sections.get('Health').items,
    json.health.map((h) => `\`${h.code}\`: ${h.message}`),
    'ranks health',
  );
  const cells = doc.sections
    .get('Per rank (measured region)')
    .rows.slice(1)
    .map((row) => plainText(row.at(-1), 'ranks'));
  assert(
    JSON.stringify(cells) === JSON.stringify(json.ranks.map((r) => r.file)),
    `the file cells render as ${JSON.stringify(cells)}`,
  );
});

run.finish();
