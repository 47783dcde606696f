// advplan play's page (docs/PLAY.md): the scenario, on RED's turn the BLUE plan it answers, and a plan editor over
// the scenario's vocabulary whose plan the server's validator checks as the person types. Everything the page shows
// that comes from the scenario is set as text, never as markup. Nothing is fetched but this sitting's own files.
'use strict';

const CATEGORIES = ['movement', 'fires', 'protection', 'information', 'sustainment', 'command', 'cyber',
  'deception', 'civil', 'public_information'];
let state = null;    // the server's state
let rows = [];       // the editor's actions: {id, asset, category, verb, target, priority, chain}
let branches = [];   // {at, condition, options: ["a5 a6", ...]}
let checkTimer = null;
let checkSerial = 0;

function el(tag, text, attrs) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

async function request(path, body) {
  const init = body === undefined ? {} :
    { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
  const r = await fetch(path, init);
  const type = r.headers.get('Content-Type') || '';
  const data = type.startsWith('application/json') ? await r.json() : { messages: [await r.text()] };
  return { status: r.status, data };
}

function mySide() { return state.side; }
function myAssets() { return state.scenario.assets.filter((a) => a.side === mySide()); }

function renderScenario(sc) {
  document.getElementById('scenario-title').textContent =
    `Scenario ${state.index + 1} of ${state.total}: ${sc.id} (${sc.template}, seed ${sc.seed})`;
  document.getElementById('objective').textContent = `${mySide()} objective: ${sc.objectives[mySide()]}`;
  const t = sc.terrain;
  document.getElementById('terrain').textContent =
    `Terrain: ${t.family}; exposure ${t.exposure}, mobility ${t.mobility}, visibility ${t.visibility}. ` +
    `Places: ${sc.places.join(', ')}.`;
  const body = document.querySelector('#assets tbody');
  clear(body);
  for (const a of sc.assets) {
    const tr = el('tr');
    for (const v of [a.id, a.side, a.type, a.role, a.categories.join(' '), a.capability, a.cost, a.mobility])
      tr.appendChild(el('td', v));
    body.appendChild(tr);
  }
  const req = sc.requirements[mySide()];
  const weights = Object.entries(req.weights).filter(([, w]) => w > 0)
    .map(([c, w]) => `${c} ${w.toFixed(2)}`).join(', ');
  document.getElementById('requirements').textContent =
    `Budget ${req.budget}, effort scale ${req.effort_scale}; category weights: ${weights}.`;
  const places = document.getElementById('places');
  clear(places);
  for (const p of sc.places) places.appendChild(el('option', null, { value: p }));
}

function renderOpponent() {
  const pane = document.getElementById('opponent-pane');
  pane.hidden = state.side !== 'RED';
  if (pane.hidden) return;
  document.getElementById('opponent-policy').textContent = state.opponent ?
    `Policy ${state.opponent_policy}, plan ${state.opponent.plan_id}:` :
    `Policy ${state.opponent_policy} gave no plan (${state.opponent_failure}).`;
  const list = document.getElementById('opponent');
  clear(list);
  const plan = state.opponent;
  if (!plan) return;
  const byId = new Map(plan.actions.map((a) => [a.id, a]));
  for (const id of plan.chain) {
    const a = byId.get(id);
    if (!a) continue;
    list.appendChild(el('li', `${a.id}: ${a.asset} ${a.verb} (${a.category}) → ${a.target}, priority ${a.priority}`));
  }
  document.getElementById('opponent-branches').textContent = plan.branches.map((b) =>
    `at ${b.at} (${b.condition}): ` + b.options.map((o) => o.join(' → ')).join(' | ')).join('\n');
}

// The map: every position of the GeoJSON's features projected onto the box (equirectangular), drawn as SVG.
function renderMap(geo) {
  const pane = document.getElementById('map-pane');
  pane.hidden = !geo;
  const svg = document.getElementById('map');
  clear(svg);
  if (!geo) return;
  const shapes = [];
  const walk = (c, out) => { if (typeof c[0] === 'number') out.push(c); else for (const x of c) walk(x, out); };
  for (const f of geo.features || []) {
    if (!f.geometry || !f.geometry.coordinates) continue;
    const pts = [];
    walk(f.geometry.coordinates, pts);
    shapes.push({ type: f.geometry.type, pts, name: (f.properties || {}).name });
  }
  const all = shapes.flatMap((s) => s.pts);
  if (all.length === 0) return;
  const xs = all.map((p) => p[0]); const ys = all.map((p) => p[1]);
  const x0 = Math.min(...xs); const x1 = Math.max(...xs); const y0 = Math.min(...ys); const y1 = Math.max(...ys);
  const sx = (x) => 10 + 380 * (x - x0) / ((x1 - x0) || 1);
  const sy = (y) => 290 - 280 * (y - y0) / ((y1 - y0) || 1);
  const ns = 'http://www.w3.org/2000/svg';
  for (const s of shapes) {
    const node = document.createElementNS(ns, s.type === 'Point' ? 'circle' : 'polyline');
    if (s.type === 'Point') {
      node.setAttribute('cx', sx(s.pts[0][0])); node.setAttribute('cy', sy(s.pts[0][1])); node.setAttribute('r', 4);
    } else {
      node.setAttribute('points', s.pts.map((p) => `${sx(p[0])},${sy(p[1])}`).join(' '));
      node.setAttribute('fill', 'none'); node.setAttribute('stroke', '#557'); node.setAttribute('stroke-width', 1);
    }
    const title = document.createElementNS(ns, 'title');
    title.textContent = s.name || s.type;
    node.appendChild(title);
    svg.appendChild(node);
  }
}

function select(cls, options, value, onChange) {
  const s = el('select', null, { class: cls });
  for (const o of options) s.appendChild(el('option', o, { value: o }));
  s.value = value;
  s.addEventListener('change', () => onChange(s.value));
  return s;
}

function input(cls, value, onInput, attrs) {
  const i = el('input', null, Object.assign({ class: cls, type: 'text' }, attrs || {}));
  i.value = value;
  i.addEventListener('input', () => onInput(i.value));
  return i;
}

function button(cls, text, onClick) {
  const b = el('button', text, { class: cls, type: 'button' });
  b.addEventListener('click', onClick);
  return b;
}

function verbsOf(category) { return state.scenario.verbs[category] || []; }

function actionRow(r, i) {
  const tr = el('tr');
  const cell = (node) => { const td = el('td'); td.appendChild(node); tr.appendChild(td); };
  const chain = el('input', null, { class: 'a-chain', type: 'checkbox' });
  chain.checked = r.chain;
  chain.addEventListener('change', () => { r.chain = chain.checked; changed(); });
  cell(chain);
  cell(input('a-id', r.id, (v) => { r.id = v; changed(); }));
  cell(select('a-asset', myAssets().map((a) => a.id), r.asset, (v) => { r.asset = v; changed(); }));
  cell(select('a-category', CATEGORIES, r.category, (v) => {
    r.category = v; r.verb = verbsOf(v)[0] || ''; renderEditor(); changed();
  }));
  cell(select('a-verb', verbsOf(r.category), r.verb, (v) => { r.verb = v; changed(); }));
  cell(input('a-target', r.target, (v) => { r.target = v; changed(); }, { list: 'places' }));
  cell(input('a-priority', r.priority, (v) => { r.priority = v; changed(); }, { type: 'number', min: 1, max: 5 }));
  const td = el('td');
  td.appendChild(button('a-up', '↑', () => move(i, -1)));
  td.appendChild(button('a-down', '↓', () => move(i, 1)));
  td.appendChild(button('a-remove', '✕', () => { rows.splice(i, 1); renderEditor(); changed(); }));
  tr.appendChild(td);
  return tr;
}

function move(i, d) {
  const j = i + d;
  if (j < 0 || j >= rows.length) return;
  [rows[i], rows[j]] = [rows[j], rows[i]];
  renderEditor();
  changed();
}

function branchBox(b, i) {
  const box = el('div', null, { class: 'branch' });
  box.appendChild(el('span', 'at '));
  box.appendChild(select('b-at', rows.filter((r) => r.chain).map((r) => r.id), b.at, (v) => { b.at = v; changed(); }));
  box.appendChild(el('span', ' if '));
  box.appendChild(input('b-condition', b.condition, (v) => { b.condition = v; changed(); }));
  b.options.forEach((o, k) => {
    box.appendChild(el('span', ` option ${k + 1} (action ids): `));
    box.appendChild(input('b-option', o, (v) => { b.options[k] = v; changed(); }));
  });
  box.appendChild(button('b-add-option', 'Add an option', () => { b.options.push(''); renderEditor(); changed(); }));
  box.appendChild(button('b-remove', 'Remove the branch', () => { branches.splice(i, 1); renderEditor(); changed(); }));
  return box;
}

function renderEditor() {
  const body = document.querySelector('#actions tbody');
  clear(body);
  rows.forEach((r, i) => body.appendChild(actionRow(r, i)));
  const box = document.getElementById('branches');
  clear(box);
  branches.forEach((b, i) => box.appendChild(branchBox(b, i)));
}

function nextId() {
  let n = rows.length + 1;
  while (rows.some((r) => r.id === `a${n}`)) ++n;
  return `a${n}`;
}

function addAction() {
  const a = myAssets()[0] || { id: '', categories: ['movement'] };
  const category = a.categories[0];
  rows.push({ id: nextId(), asset: a.id, category, verb: verbsOf(category)[0] || '',
    target: state.scenario.places[0] || '', priority: 3, chain: true });
  renderEditor();
  changed();
}

// The editor's plan, in the plan contract (docs/POLICIES.md "1.5 The plan"); roles from the assets' own roles.
function currentPlan() {
  const sc = state.scenario;
  const roles = {};
  for (const r of rows) {
    const a = sc.assets.find((x) => x.id === r.asset);
    if (a) roles[a.id] = a.role;
  }
  const prio = (p) => (/^-?\d+$/.test(String(p).trim()) ? Number(p) : p);
  return {
    plan_id: `${sc.id}/${mySide().toLowerCase()}/human`, side: mySide(), objective: sc.objectives[mySide()],
    domain: sc.domain, roles,
    actions: rows.map((r) => ({ id: r.id, asset: r.asset, verb: r.verb, category: r.category, target: r.target,
      priority: prio(r.priority) })),
    chain: rows.filter((r) => r.chain).map((r) => r.id),
    branches: branches.map((b) => ({ at: b.at, condition: b.condition,
      options: b.options.map((o) => o.split(/[\s,]+/).filter((x) => x.length > 0)) })),
    tool_calls: [],
  };
}

function loadPlan(plan) {
  const inChain = new Set(plan.chain || []);
  const order = (plan.chain || []).concat((plan.actions || []).map((a) => a.id).filter((id) => !inChain.has(id)));
  const byId = new Map((plan.actions || []).map((a) => [a.id, a]));
  rows = order.filter((id) => byId.has(id)).map((id) => {
    const a = byId.get(id);
    return { id: a.id, asset: a.asset, category: a.category, verb: a.verb, target: a.target,
      priority: a.priority, chain: inChain.has(id) };
  });
  branches = (plan.branches || []).map((b) => ({ at: b.at, condition: b.condition || '',
    options: (b.options || []).map((o) => o.join(' ')) }));
  renderEditor();
  changed();
}

function showMessages(messages) {
  const list = document.getElementById('messages');
  clear(list);
  list.className = messages.length === 0 ? 'ok' : '';
  if (messages.length === 0) list.appendChild(el('li', 'The plan is valid.'));
  for (const m of messages) list.appendChild(el('li', m));
  document.getElementById('submit').disabled = messages.length !== 0;
}

// Every edit: the JSON view follows, and the validator is asked a moment after the last keystroke.
function changed() {
  document.getElementById('json').value = JSON.stringify(currentPlan(), null, 2);
  document.getElementById('submit').disabled = true;
  clearTimeout(checkTimer);
  checkTimer = setTimeout(check, 200);
}

async function check() {
  const serial = ++checkSerial;
  const r = await request('validate', { scenario_id: state.scenario.id, plan: currentPlan() });
  if (serial === checkSerial) showMessages(r.data.messages || []);
}

function render() {
  const status = document.getElementById('status');
  if (state.done) {
    status.textContent =
      `All ${state.total} scenarios are played. advplan is writing the run; you may close this page.`;
    status.className = 'done';
    document.querySelector('main').hidden = true;
    return;
  }
  status.textContent = `You play ${state.side}. Scenario ${state.index + 1} of ${state.total}; ` +
    `${state.played} played so far.`;
  renderScenario(state.scenario);
  renderOpponent();
  renderMap(state.map);
  document.getElementById('seed').hidden = state.side !== 'BLUE';
  rows = []; branches = [];
  clear(document.getElementById('messages'));
  renderEditor();
  changed();
}

async function submit() {
  document.getElementById('submit').disabled = true;
  const r = await request('submit', { scenario_id: state.scenario.id, plan: currentPlan() });
  if (r.status !== 200) { showMessages(r.data.messages || [`The server answered ${r.status}.`]); return; }
  state = r.data;
  render();
}

function loadJson() {
  try {
    loadPlan(JSON.parse(document.getElementById('json').value));
  } catch (e) {
    showMessages([`The text is not JSON: ${e.message}`]);
  }
}

async function start() {
  document.getElementById('add-action').addEventListener('click', addAction);
  document.getElementById('add-branch').addEventListener('click', () => {
    const first = rows.find((r) => r.chain);
    branches.push({ at: first ? first.id : '', condition: '', options: ['', ''] });
    renderEditor();
    changed();
  });
  document.getElementById('seed').addEventListener('click', () => loadPlan(state.scenario.blue_seed_plans[0]));
  document.getElementById('clear').addEventListener('click', () => loadPlan({}));
  document.getElementById('submit').addEventListener('click', submit);
  document.getElementById('load-json').addEventListener('click', loadJson);
  const r = await request('state');
  if (r.status !== 200) { document.getElementById('status').textContent = (r.data.messages || []).join(' '); return; }
  state = r.data;
  render();
}

start();
