// The interactive docs page: one self-contained HTML file that renders /openapi.json and sends calls with a pasted key.

// Everything is inline (no CDN): the page works offline and on hosts that reach only themselves.
// Values from the document become text nodes, never markup.
export const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolgate API</title>
<style>
  :root { --fg: #1d2330; --muted: #5b6475; --line: #dde1e8; --bg: #f7f8fa; --accent: #2456c7; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
  header { padding: 1rem 2rem; background: #fff; border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: 1rem 2rem; align-items: center; }
  header h1 { margin: 0; font-size: 1.3rem; }
  header label { margin-left: auto; display: flex; gap: .5rem; align-items: center; }
  nav { padding: .5rem 2rem; display: flex; flex-wrap: wrap; gap: 1rem; border-bottom: 1px solid var(--line); background: #fff; }
  main { padding: 1rem 2rem 4rem; max-width: 72rem; }
  a { color: var(--accent); }
  h2 { margin: 2rem 0 .25rem; text-transform: capitalize; }
  .tag-description, .muted { color: var(--muted); }
  details.op { background: #fff; border: 1px solid var(--line); border-radius: 6px; margin: .5rem 0; }
  details.op > summary { padding: .5rem .75rem; cursor: pointer; display: flex; gap: .75rem; align-items: baseline; flex-wrap: wrap; }
  .op-body { padding: 0 1rem 1rem; border-top: 1px solid var(--line); }
  .method { font: 600 .8rem/1 ui-monospace, monospace; padding: .25rem .4rem; border-radius: 4px; color: #fff; min-width: 4rem; text-align: center; }
  .get { background: #2f7d4f; } .post { background: #2456c7; } .put { background: #9a6a00; } .delete { background: #b3261e; }
  .path { font: 600 .95rem ui-monospace, monospace; }
  .badge { font-size: .75rem; color: var(--muted); border: 1px solid var(--line); border-radius: 999px; padding: 0 .5rem; }
  h4 { margin: 1rem 0 .25rem; }
  table { border-collapse: collapse; width: 100%; font-size: .9rem; }
  th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid var(--line); }
  td:first-child { width: 8rem; }
  code, pre, input, textarea, select { font-family: ui-monospace, monospace; font-size: .85rem; }
  pre { background: var(--bg); border: 1px solid var(--line); border-radius: 4px; padding: .5rem; overflow: auto; max-height: 24rem; margin: .25rem 0; }
  form.try { display: grid; gap: .5rem; margin-top: .5rem; }
  form.try label { display: grid; grid-template-columns: 10rem 1fr; gap: .5rem; align-items: center; }
  input, textarea, select { padding: .3rem .4rem; border: 1px solid var(--line); border-radius: 4px; width: 100%; }
  textarea { min-height: 8rem; }
  button { justify-self: start; padding: .4rem 1.2rem; border: 0; border-radius: 4px; background: var(--accent); color: #fff; cursor: pointer; }
  .result .status { font-weight: 600; margin: .5rem 0 0; }
  #key { width: 22rem; }
</style>
</head>
<body>
<header>
  <h1>toolgate API</h1>
  <span class="muted">Generated from <a href="openapi.json">openapi.json</a>.</span>
  <label>API key <input id="key" type="password" autocomplete="off" spellcheck="false" placeholder="paste a key to try calls"></label>
</header>
<nav id="tags"></nav>
<main id="operations"><p id="loading">Loading openapi.json&hellip;</p></main>
<script>
'use strict';
const REF = '#/components/schemas/';
const keyInput = document.getElementById('key');

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') node.className = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child !== undefined && child !== null && child !== false) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** The schema with its component references written out (a cycle stays a reference), without $schema noise. */
function resolve(doc, schema, seen) {
  if (Array.isArray(schema)) return schema.map((item) => resolve(doc, item, seen));
  if (!schema || typeof schema !== 'object') return schema;
  if (typeof schema.$ref === 'string' && schema.$ref.startsWith(REF)) {
    const name = schema.$ref.slice(REF.length);
    if (seen.has(name)) return schema;
    return resolve(doc, doc.components.schemas[name], new Set(seen).add(name));
  }
  const out = {};
  for (const [name, value] of Object.entries(schema)) if (name !== '$schema') out[name] = resolve(doc, value, seen);
  return out;
}

/** A body to start from: the required fields with placeholder values. */
function example(schema) {
  if (!schema || typeof schema !== 'object') return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const choices = schema.oneOf || schema.anyOf;
  if (choices) return example(choices[0]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'object') {
    const out = {};
    for (const name of schema.required || []) out[name] = example((schema.properties || {})[name]);
    return out;
  }
  if (type === 'array') return [];
  if (type === 'string') return '';
  if (type === 'integer' || type === 'number') return typeof schema.minimum === 'number' && schema.minimum > 0 ? schema.minimum : 0;
  if (type === 'boolean') return false;
  return null;
}

function describeSchema(schema) {
  const parts = [schema.type || 'any'];
  if (schema.enum) parts.push('one of ' + schema.enum.join(', '));
  if (schema.pattern) parts.push('matching ' + schema.pattern);
  if (schema.minimum !== undefined || schema.maximum !== undefined) parts.push((schema.minimum ?? '') + '..' + (schema.maximum ?? ''));
  return parts.join(', ');
}

function schemaBlock(doc, schema) {
  return el('pre', { class: 'schema' }, JSON.stringify(resolve(doc, schema, new Set()), null, 2));
}

function parametersTable(parameters) {
  if (parameters.length === 0) return null;
  return [
    el('h4', {}, 'Parameters'),
    el('table', {},
      el('tr', {}, el('th', {}, 'name'), el('th', {}, 'in'), el('th', {}, 'schema'), el('th', {}, 'description')),
      parameters.map((p) => el('tr', {}, el('td', {}, el('code', {}, p.name), p.required ? ' *' : ''), el('td', {}, p.in), el('td', {}, describeSchema(p.schema || {})), el('td', {}, p.description || '')))),
  ];
}

function requestSection(doc, body) {
  if (!body) return null;
  return [
    el('h4', {}, 'Request body', body.required ? '' : ' (optional)'),
    Object.entries(body.content).map(([type, media]) => [el('div', {}, el('code', {}, type)), schemaBlock(doc, media.schema || {})]),
  ];
}

function responsesSection(doc, responses) {
  return [
    el('h4', {}, 'Responses'),
    el('table', {},
      Object.entries(responses).map(([status, answer]) => el('tr', {},
        el('td', {}, el('code', {}, status)),
        el('td', {}, answer.description || '',
          Object.entries(answer.content || {}).map(([type, media]) => lazySchema(doc, type, media.schema)))))),
  ];
}

/** A response schema, written out when first opened: the error body alone would otherwise repeat on every operation. */
function lazySchema(doc, type, schema) {
  const name = schema && typeof schema.$ref === 'string' ? ' ' + schema.$ref.slice(REF.length) : '';
  const details = el('details', {}, el('summary', {}, type + name));
  details.addEventListener('toggle', () => {
    if (details.open && details.childElementCount === 1) details.append(schema ? schemaBlock(doc, schema) : el('p', { class: 'muted' }, 'Binary or free-form content.'));
  });
  return details;
}

function field(label, control) {
  return el('label', {}, label, control);
}

function tryForm(doc, path, method, op) {
  const parameters = op.parameters || [];
  const content = op.requestBody ? Object.entries(op.requestBody.content) : [];
  const controls = parameters.map((p) => {
    const schema = p.schema || {};
    const control = schema.enum
      ? el('select', { name: p.name, required: p.required }, el('option', { value: '' }, '(default)'), schema.enum.map((value) => el('option', { value }, value)))
      : el('input', { name: p.name, required: p.required, placeholder: describeSchema(schema), autocomplete: 'off' });
    return field(p.name + ' (' + p.in + ')', control);
  });
  if (content.length > 1) controls.push(field('content type', el('select', { name: 'content-type' }, content.map(([type]) => el('option', { value: type }, type)))));
  if (content.length > 0) {
    const [type, media] = content[0];
    const start = type === 'application/json' ? JSON.stringify(example(resolve(doc, media.schema, new Set())), null, 2) : '';
    controls.push(field('body', el('textarea', { name: 'body', spellcheck: 'false' }, start)));
  }
  const status = el('p', { class: 'status' });
  const output = el('pre', { class: 'body' });
  const result = el('div', { class: 'result', hidden: true }, status, output);
  const form = el('form', { class: 'try' }, el('h4', {}, 'Try it'), controls, el('button', { type: 'submit' }, 'Send'), result);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    send(form, path, method, parameters).then(
      (shown) => { status.textContent = shown.status; output.textContent = shown.body; result.hidden = false; },
      (error) => { status.textContent = 'The request failed: ' + error.message; output.textContent = ''; result.hidden = false; });
  });
  return form;
}

async function send(form, path, method, parameters) {
  const value = (name) => (form.elements.namedItem(name) || { value: '' }).value;
  const target = path.replace(/\\{(\\w+)\\}/g, (_, name) => encodeURIComponent(value(name)));
  const query = new URLSearchParams();
  for (const p of parameters) if (p.in === 'query' && value(p.name) !== '') query.set(p.name, value(p.name));
  const url = new URL('.' + target + (query.toString() ? '?' + query : ''), location.href);
  const headers = {};
  const key = keyInput.value.trim();
  if (key) headers.authorization = 'Bearer ' + key;
  for (const p of parameters) if (p.in === 'header' && value(p.name) !== '') headers[p.name] = value(p.name);
  const init = { method: method.toUpperCase(), headers };
  const body = value('body');
  if (form.elements.namedItem('body') && body.trim() !== '') {
    headers['content-type'] = value('content-type') || 'application/json';
    init.body = body;
  }
  const response = await fetch(url, init);
  const type = response.headers.get('content-type') || '';
  let text;
  if (type.includes('json')) {
    const raw = await response.text();
    try { text = JSON.stringify(JSON.parse(raw), null, 2); } catch { text = raw; }
  } else if (type.startsWith('text/')) text = await response.text();
  else text = (await response.arrayBuffer()).byteLength + ' bytes' + (type ? ' of ' + type : '');
  return { status: response.status + ' ' + response.statusText + '  (' + init.method + ' ' + url.pathname + url.search + ')', body: text };
}

function render(doc) {
  const main = document.getElementById('operations');
  const nav = document.getElementById('tags');
  main.replaceChildren(el('p', { class: 'muted' }, doc.info.description || ''));
  const byTag = new Map((doc.tags || []).map((tag) => [tag.name, { tag, operations: [] }]));
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const name = (op.tags || ['other'])[0];
      if (!byTag.has(name)) byTag.set(name, { tag: { name }, operations: [] });
      byTag.get(name).operations.push({ path, method, op });
    }
  }
  for (const { tag, operations } of byTag.values()) {
    if (operations.length === 0) continue;
    nav.append(el('a', { href: '#tag-' + tag.name }, tag.name + ' (' + operations.length + ')'));
    main.append(el('section', { id: 'tag-' + tag.name },
      el('h2', {}, tag.name),
      tag.description ? el('p', { class: 'tag-description' }, tag.description) : null,
      operations.map(({ path, method, op }) => el('details', { class: 'op', id: 'op-' + op.operationId, 'data-operation': method.toUpperCase() + ' ' + path },
        el('summary', {}, el('span', { class: 'method ' + method }, method.toUpperCase()), ' ', el('code', { class: 'path' }, path), ' ', el('span', {}, op.summary || ''),
          op.security && op.security.length === 0 ? el('span', { class: 'badge' }, 'no key') : null),
        el('div', { class: 'op-body' },
          op.description ? el('p', {}, op.description) : null,
          parametersTable(op.parameters || []),
          requestSection(doc, op.requestBody),
          responsesSection(doc, op.responses || {}),
          tryForm(doc, path, method, op))))));
  }
  // A link to an operation (#op-<operationId>) opens it.
  const target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
  if (target) {
    if (target.tagName === 'DETAILS') target.open = true;
    target.scrollIntoView();
  }
}

fetch('openapi.json')
  .then((response) => { if (!response.ok) throw new Error('status ' + response.status); return response.json(); })
  .then(render)
  .catch((error) => { document.getElementById('loading').textContent = 'Could not load openapi.json: ' + error.message; });
</script>
</body>
</html>
`;
