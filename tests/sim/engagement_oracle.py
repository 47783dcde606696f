"""An independent re-implementation of the engagement wargame, written from docs/ alone (docs/METRICS.md "Plan
layout", "Quality q", "Constraint coherence D", "Wargame simulator", "Engagement wargame", "Random streams" and
docs/TRACES.md "engagements.csv and replications.csv"), without reading advplan's code. It replays every cell of an
engagement run from the run's plans.jsonl and the scenarios (`advplan scenarios CONFIG`) and compares each
replications.csv row, each engagements.csv row and per_scenario.csv's win rate and final strengths with its own, as
printed (6 decimals). q and D are computed here too, not read from the traces. Sweep and attribution points
(conditions `label [settings]`) are played under their own settings and are skipped.

On maps (terrain: geo; docs/METRICS.md "Moves on the map" and "Geospatial terms", docs/GEO.md "Layout rules") each
bound move's route hours and exposure come from geo_moves.csv, where they are printed to 6 decimals while advplan
plays them unrounded; so there a number may differ by at most 2e-6 (tolerance), while every count, bit string,
step and text must still be identical. (A second docs-only reader reproduced all 1,350 map cells exactly once 27
exposures were moved inside their rounding intervals.)

    /usr/bin/python3 engagement_oracle.py RUN_DIR SCENARIOS_JSONL

Prints "engagement oracle: N of N cells identical" (on maps "... cells identical within 2e-06") and exits 0, or lists
the first differences and exits 1. Runs with replanning are not modelled here and are refused. Standard library
only.
"""
import collections
import csv
import json
import math
import os
import sys

# ---------------------------------------------------------------- random streams (docs/METRICS.md "Random streams")
M64 = 2**64 - 1


def fnv1a(data, h=0xcbf29ce484222325):
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & M64
    return h


def stream_seed(seed, scenario, purpose, index=0):
    return fnv1a(seed.to_bytes(8, "little") + scenario.encode() + b"\x1f" + purpose.encode()
                 + index.to_bytes(8, "little"))


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


class Rng:
    """xoshiro256** seeded by SplitMix64."""

    def __init__(self, seed):
        s = []
        for _ in range(4):
            seed = (seed + 0x9e3779b97f4a7c15) & M64
            z = ((seed ^ (seed >> 30)) * 0xbf58476d1ce4e5b9) & M64
            z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
            s.append(z ^ (z >> 31))
        self.s = s

    def next(self):
        s = self.s
        r = rotl(s[1] * 5 & M64, 7) * 9 & M64
        t = s[1] << 17 & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return r

    def uniform(self):
        return (self.next() >> 11) * 2.0**-53

    def normal(self):
        u1 = self.uniform()
        while u1 <= 0.0:
            u1 = self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


# ---------------------------------------------------------------- q and D (docs/METRICS.md)
START = {'transit', 'deploy', 'marshal', 'prepare', 'assess', 'scan', 'recon'}
END = {'return', 'withdraw', 'hold', 'evade', 'relocate', 'continue', 'support', 'mitigate'}


def clamp(x, lo=0.0, hi=1.0):
    return min(hi, max(lo, x))


def layout(plan, sc):
    acts = {a['id']: a for a in plan['actions']}
    assets = {a['id']: a for a in sc['assets']}
    chain = plan['chain']
    out = []
    for i, aid in enumerate(chain):
        if aid in acts:
            out.append(dict(a=acts[aid], pos=float(i), w=1.0, asset=assets.get(acts[aid]['asset']), opt=None))
    for bi, b in enumerate(plan.get('branches', [])):
        idx = [k for k, x in enumerate(chain) if x == b['at']]
        i = idx[-1] if idx else 0
        n = len(b['options'])
        for oi, opt in enumerate(b['options']):
            for m, aid in enumerate(opt):
                if aid in acts:
                    out.append(dict(a=acts[aid], pos=i + (m + 1) / (len(opt) + 1), w=1.0 / n,
                                    asset=assets.get(acts[aid]['asset']), opt=(bi, oi)))
    return out


def coverage(lay, k):
    a = lay[k]
    tot = 0.0
    for j, b in enumerate(lay):
        if j == k or b['a']['category'] not in ('protection', 'deception') or not b['pos'] <= a['pos']:
            continue
        mult = 1.0
        if a['opt'] is not None and b['opt'] is not None:
            if a['opt'] != b['opt']:
                continue
        elif a['opt'] is None and b['opt'] is not None:  # an option protector covers a later chain step
            if not b['pos'] < a['pos']:
                continue
            mult = b['w']
        share = b['a'].get('target', '') == a['a'].get('target', '') or b['a']['asset'] == a['a']['asset']
        tot += (1.0 if share else 0.5) * mult
    return min(1.0, tot)


def q_and_d(plan, sc, side, weights):
    lay = layout(plan, sc)
    terr = sc['terrain']
    req = sc['requirements'][side]
    supply = {}
    for x in lay:
        if x['asset'] is None:
            continue
        k = x['a']['category']
        tf = terr['category_modifiers'][k]
        if k == 'movement':
            tf = tf * (terr['mobility'] * (0.5 + 0.5 * x['asset']['mobility']))
        elif k == 'information':
            tf = tf * terr['visibility']
        supply[k] = supply.get(k, 0.0) + x['w'] * x['asset']['capability'] * (x['a']['priority'] / 5.0) * tf
    e = 0.0
    for k, wk in req['weights'].items():
        e += min(wk, supply.get(k, 0.0) / req['effort_scale'])
    e = clamp(e)
    cost = 0.0
    for x in lay:
        if x['asset'] is not None:
            cost += x['w'] * x['asset']['cost']
    c = clamp(cost / req['budget'])
    cov = [coverage(lay, k) for k in range(len(lay))]
    expo = [min(1.0, sc['exposure'][x['a']['category']] * terr['exposure']) for x in lay]
    sw = sum(x['w'] for x in lay)
    r = 1.0 if not lay or sw == 0 else clamp(sum(x['w'] * expo[k] * (1 - 0.7 * cov[k]) for k, x in enumerate(lay)) / sw)
    q = clamp(weights['effectiveness'] * e + weights['cost'] * (1 - c) + weights['risk'] * (1 - r))

    def lower(s):
        return ''.join(chr(ord(ch) + 32) if 'A' <= ch <= 'Z' else ch for ch in s)

    obj = plan.get('objective', '')
    nw = len(obj.split())
    len_ok = 1.0 if 4 <= nw <= 30 else (0.5 if nw > 0 else 0.0)
    names = 1.0 if any(x['a'].get('target', '') and lower(x['a']['target']) in lower(obj) for x in lay) else 0.0
    used = []
    for x in lay:
        if x['a']['asset'] not in used:
            used.append(x['a']['asset'])
    roles = plan.get('roles', {}) or {}
    role_cover = sum(1 for u in used if roles.get(u)) / len(used) if used else 0.0
    s1 = (len_ok + names + role_cover) / 3.0
    infos = [x['pos'] for x in lay if x['a']['category'] == 'information']
    fm = [x for x in lay if x['a']['category'] in ('fires', 'movement')]
    s2 = 1.0 if not fm else (0.0 if not infos else sum(1 for x in fm if x['pos'] > min(infos)) / len(fm))
    load = {}
    for x in lay:
        load[x['a']['asset']] = load.get(x['a']['asset'], 0.0) + x['w']
    n = min(len(lay), sum(1 for a in sc['assets'] if a['side'] == side))
    if n <= 1:
        s3 = 1.0
    else:
        tot = sum(load.values())
        h = 0.0
        for asset in sorted(load):
            p = load[asset] / tot
            if p > 0:
                h -= p * math.log(p)
        s3 = clamp(h / math.log(n))
    s4 = 0.0 if not lay else min(1.0, sum(1 for x in lay if x['a']['category'] == 'sustainment') / math.ceil(len(lay) / 4))
    ex = [k for k in range(len(lay)) if expo[k] >= 0.5]
    s5 = sum(cov[k] for k in ex) / len(ex) if ex else 1.0
    acts = {a['id']: a for a in plan['actions']}
    ph = []
    for aid in plan['chain']:
        if aid in acts:
            a = acts[aid]
            ph.append(2 if a['verb'] in END else 0 if a['verb'] in START or a['category'] in ('information', 'command') else 1)
    s6 = 1.0 if len(ph) <= 1 else sum(1 for i in range(len(ph) - 1) if ph[i + 1] >= ph[i]) / (len(ph) - 1)
    return q, (s1 + s2 + s3 + s4 + s5 + s6) / 6.0, e, c, r


def geo_quality(q, e, r, moves, weights):
    """docs/METRICS.md "Geospatial terms": q' = q + w_e (e' - e) - w_r (r' - r), e' = e (1 - .5 f),
    r' = r + .5 x (1 - r), over the plan's bound moves (unweighted)."""
    if not moves:
        return q
    f = sum(1 for m in moves if m['status'] == 'infeasible') / len(moves)
    xbar = sum(m['x'] for m in moves) / len(moves)
    return q + weights['effectiveness'] * (e * (1 - 0.5 * f) - e) - weights['risk'] * (r + 0.5 * xbar * (1 - r) - r)


# ---------------------------------------------------------------- the engagement wargame (docs/METRICS.md)
BASE_STEPS = dict(movement=8, fires=4, information=4, cyber=4, sustainment=6, protection=3, command=2,
                  public_information=3, deception=3, civil=4)
CONTACT = ('fires', 'movement')
SQRT3 = math.sqrt(3.0)


class Settings:
    def __init__(self, meta):
        sim = meta['simulator']
        eng = sim.get('engagement', {})
        self.seed = int(meta['seed'])
        self.R, self.bp, self.T, self.dt = sim['replications'], sim['break_point'], sim['time_limit'], sim['dt']
        self.sigma, self.sigma_s = sim['noise'], sim['step_noise']
        self.support, self.durations, self.effect = eng['support'], eng['durations'], eng['effect_steps']
        self.weights = meta['quality_weights']


def raw_capability(plan, assets):
    ids = sorted({a['asset'] for a in plan['actions'] if a['asset'] in assets})
    return sum(assets[x]['capability'] for x in ids)


class SidePlan:
    def __init__(self, plan, assets, terrain, raw, cfg, moves=None, window=None):
        self.acts = {a['id']: a for a in plan['actions']}
        self.chain = list(plan['chain'])
        self.branches = {}
        for b in plan.get('branches', []):
            self.branches.setdefault(b['at'], b)
        self.raw = raw
        self.steps = {}
        for aid, a in self.acts.items():
            m = 1.0
            if a['category'] == 'movement':
                mob = assets[a['asset']]['mobility'] if a['asset'] in assets else 0.5
                m = max(0.25, mob * terrain['mobility'])
            self.steps[aid] = int(math.floor(cfg.durations * BASE_STEPS[a['category']] / m + 0.5))
        self.cap = {aid: (assets[a['asset']]['capability'] if a['asset'] in assets else 0.0)
                    for aid, a in self.acts.items()}
        # On a map a bound move takes min(T, round(s T h / W)) steps (T when no route reaches, h < 0) and, while it
        # runs, draws fire on x c of its side, c = min(1, capability / raw).
        self.exposed = {}
        for aid, mv in (moves or {}).items():
            if aid not in self.acts or self.acts[aid]['category'] != 'movement':
                continue
            h = mv['h']
            self.steps[aid] = cfg.T if h < 0 else min(cfg.T, int(math.floor(cfg.durations * cfg.T * h / window + 0.5)))
            if h >= 0 and mv['x'] > 0 and raw > 0:
                self.exposed[aid] = mv['x'] * min(1.0, self.cap[aid] / raw)


class SideState:
    def __init__(self, side):
        self.p = side
        self.queue = list(side.chain)
        self.running = None  # (action id, end step)
        self.next_start = 0
        self.decided = set()
        self.engaged = []
        self.where = []
        self.E = 0.0
        self.until = {}  # category -> last active step
        self.decisions = []
        self.committed = False

    def active(self, c, t):
        return self.until.get(c, -1) >= t

    def share(self):
        return 1.0 if self.E >= self.p.raw * (1 - 1e-12) else self.E / self.p.raw


def advance(st, t, own, other, cfg):
    while True:
        if st.running is not None:
            aid, end = st.running
            if end > t:
                return
            st.running = None
            c = st.p.acts[aid]['category']
            if cfg.support and c not in CONTACT:
                st.until[c] = max(st.until.get(c, -1), end + cfg.effect - 1)
            if aid in st.p.branches and aid not in st.decided:
                st.decided.add(aid)
                b = st.p.branches[aid]
                opt = 0 if own >= other else len(b['options']) - 1
                st.decisions.append('%s=%d' % (aid, opt))
                st.queue = list(b['options'][opt]) + st.queue
            st.next_start = end
        while st.queue and st.queue[0] not in st.p.acts:
            st.queue.pop(0)
        if not st.queue or st.next_start > t:
            return
        aid = st.queue.pop(0)
        a = st.p.acts[aid]
        st.running = (aid, t + st.p.steps[aid])
        if a['category'] in CONTACT:
            st.committed = True
            if a['asset'] not in st.engaged:
                st.engaged.append(a['asset'])
                st.E += st.p.cap[aid]
                st.where.append(a['target'])


def exposed_share(st, t):
    if st.running is None or st.running[1] <= t:
        return 0.0
    return st.p.exposed.get(st.running[0], 0.0)


def fire(own, oth, t, cfg):
    f = own.share()
    if cfg.support:
        if own.active('information', t):
            f = f * (1.1 if oth.active('deception', t) else 1.2)
        if own.active('command', t):
            f = f * 1.1
        if oth.active('cyber', t):
            f = f * (0.9 if own.active('cyber', t) else 0.8)
        if oth.active('deception', t):
            f = f * 0.85
    return f


def loss(own, t, cfg):
    return 0.7 if cfg.support and own.active('protection', t) else 1.0


def noise_of(sid, cfg):
    out = []
    for r in range(cfg.R):
        g = Rng(stream_seed(cfg.seed, sid, 'sim', r))
        zb, zr = g.normal(), g.normal()
        u = [((2.0 * g.uniform() - 1.0) * SQRT3, (2.0 * g.uniform() - 1.0) * SQRT3) for _ in range(cfg.T)]
        out.append((zb, zr, u))
    return out


def play(blue, red, pb, pr, noise, cfg, traced=5):
    pm = (pb + pr) / 2.0
    res = collections.defaultdict(list)
    for r in range(cfg.R):
        zb, zr, us = noise[r]
        alpha = (pb / pm) * math.exp(cfg.sigma * zb)
        beta = (pr / pm) * math.exp(cfg.sigma * zr)
        sb, sr = SideState(blue), SideState(red)
        b = rr = 1.0
        lb = lr = 0.0
        fought = False
        cur = None
        end_t = cfg.T
        for t in range(cfg.T):
            advance(sb, t, b, rr, cfg)
            advance(sr, t, rr, b, cfg)
            if sb.E > 0 and sr.E > 0:
                fought = True
                key = (tuple(sb.engaged), tuple(sr.engaged))
                if cur is None or cur['key'] != key:
                    if cur is not None:
                        cur.update(end=t, ba=b, ra=rr)
                        res['eng'].append((r, cur))
                    cur = dict(key=key, start=t, bb=b, rb=rr, where=sb.where + sr.where, bs=sb.share(), rs=sr.share())
                ub, ur = us[t]
                db = ((cfg.dt * beta) * (fire(sr, sb, t, cfg) * loss(sb, t, cfg))) * rr * max(0.0, 1.0 + cfg.sigma_s * ub)
                dr = ((cfg.dt * alpha) * (fire(sb, sr, t, cfg) * loss(sr, t, cfg))) * b * max(0.0, 1.0 + cfg.sigma_s * ur)
                nb, nr = max(0.0, b - db), max(0.0, rr - dr)
                lb += b - nb
                lr += rr - nr
                b, rr = nb, nr
            elif cur is not None:
                cur.update(end=t, ba=b, ra=rr)
                res['eng'].append((r, cur))
                cur = None
            xb, xr = exposed_share(sb, t), exposed_share(sr, t)
            if xb > 0 or xr > 0:  # both updates read the strengths after the attrition step
                ub, ur = us[t]
                db = ((cfg.dt * beta) * (xb * loss(sb, t, cfg))) * rr * max(0.0, 1.0 + cfg.sigma_s * ub)
                dr = ((cfg.dt * alpha) * (xr * loss(sr, t, cfg))) * b * max(0.0, 1.0 + cfg.sigma_s * ur)
                nb, nr = max(0.0, b - db), max(0.0, rr - dr)
                lb += b - nb
                lr += rr - nr
                b, rr = nb, nr
            if cfg.support:
                if sb.active('sustainment', t) and b > 0:
                    b = min(1.0, b + cfg.dt * 0.3 * (1.0 - b))
                if sr.active('sustainment', t) and rr > 0:
                    rr = min(1.0, rr + cfg.dt * 0.3 * (1.0 - rr))
            if b < cfg.bp or b <= 0 or rr < cfg.bp or rr <= 0:
                end_t = t + 1
                break
        if cur is not None:
            cur.update(end=end_t, ba=b, ra=rr)
            res['eng'].append((r, cur))
        bb, rb = b < cfg.bp or b <= 0, rr < cfg.bp or rr <= 0
        if rb and not bb:
            win = True
        elif bb == rb:
            win = b > rr if fought else sb.committed and not sr.committed
        else:
            win = False
        for k, v in (('wins', win), ('lb', lb), ('lr', lr), ('steps', end_t), ('fb', b), ('fr', rr),
                     ('db', ';'.join(sb.decisions)), ('dr', ';'.join(sr.decisions))):
            res[k].append(v)
    res['eng'] = [(r, c) for r, c in res['eng'] if r < traced]
    return res


def f6(x):
    return '%.6f' % x


def branch_choices(res):
    parts = []
    for side, dec in (('BLUE', res['db']), ('RED', res['dr'])):
        counts = collections.Counter(d for d in dec if d)
        parts += ['%s %s x%d' % (side, k, counts[k]) for k in sorted(counts)]
    return ' | '.join(parts)  # BLUE's, then RED's: byte order of the whole entries


def main(run_dir, scenarios_path):
    meta = json.load(open(os.path.join(run_dir, 'run_metadata.json')))
    if meta['simulator'].get('model') != 'engagement':
        sys.exit('engagement oracle: %s is not an engagement run' % run_dir)
    if 'replans: true' in meta.get('config_text', ''):
        sys.exit('engagement oracle: replanning is not modelled here')
    geo = 'terrain: geo' in meta.get('config_text', '')
    tolerance = 2e-6 if geo else 0.0
    cfg = Settings(meta)
    moves = collections.defaultdict(dict)  # (scenario, condition, side) -> action id -> bound move
    if geo:
        for m in csv.DictReader(open(os.path.join(run_dir, 'geo_moves.csv'))):
            if m['action_id'] and m['status'] in ('ok', 'infeasible'):
                h = float(m['hours']) if m['hours'] else -1.0  # < 0: no route reaches the target
                moves[(m['scenario_id'], m['condition'], m['side'])][m['action_id']] = dict(
                    status=m['status'], h=h, x=float(m['exposure']) if h >= 0 and m['exposure'] else 1.0)
    # docs/GEO.md "Layout rules": the order's time window in hours, by template
    windows = {'urban': 5.0, 'humanitarian': 5.0, 'maritime': 14.0, 'air-defense': 4.5, 'mixed': 4.0}

    def same_text(a, b):  # equal, or (on maps) the same fields with numbers within the tolerance
        if a == b:
            return True
        if not tolerance or len(a.split(';')) != len(b.split(';')):
            return False
        for x, y in zip(a.split(';'), b.split(';')):
            try:
                if '.' not in x or abs(float(x) - float(y)) > tolerance:
                    return False
            except ValueError:
                return False
        return True

    scen = {}
    for line in open(scenarios_path):
        d = json.loads(line)
        scen[d['id']] = d
    plans = collections.defaultdict(list)
    for line in open(os.path.join(run_dir, 'plans.jsonl')):
        d = json.loads(line)
        plans[d['scenario_id']].append(d)
    rows = {(r['scenario_id'], r['condition']): r for r in csv.DictReader(open(os.path.join(run_dir, 'per_scenario.csv')))}
    reps = list(csv.reader(open(os.path.join(run_dir, 'replications.csv'))))[1:]
    engs = collections.defaultdict(list)
    for r in list(csv.reader(open(os.path.join(run_dir, 'engagements.csv'))))[1:]:
        engs[(r[0], r[1])].append(r)
    noise = {}
    same = 0
    diffs = []
    skipped = 0
    for ref in reps:
        sid, cond = ref[0], ref[1]
        if '[' in cond:  # a sweep or attribution point, played under its own settings
            skipped += 1
            continue
        row = rows[(sid, cond)]
        sc = scen[sid]
        assets = {a['id']: a for a in sc['assets']}
        blue = next(d['plan'] for d in plans[sid]
                    if d['side'] == 'BLUE' and d['condition'] == '' and d['policy'] == row['blue_policy'])
        red = next(d['plan'] for d in plans[sid] if d['side'] == 'RED' and d['condition'] == cond)
        raw_b, raw_r = raw_capability(blue, assets), raw_capability(red, assets)
        qb, db, eb, _, rb = q_and_d(blue, sc, 'BLUE', cfg.weights)
        qr, dr, er, _, rr = q_and_d(red, sc, 'RED', cfg.weights)
        mb, mr = moves[(sid, cond, 'BLUE')], moves[(sid, cond, 'RED')]
        qb, qr = geo_quality(qb, eb, rb, list(mb.values()), cfg.weights), geo_quality(qr, er, rr, list(mr.values()), cfg.weights)
        pb, pr = raw_b * (0.5 + qb) * (0.5 + db), raw_r * (0.5 + qr) * (0.5 + dr)
        if sid not in noise:
            noise[sid] = noise_of(sid, cfg)
        w = windows[sc['template']]
        res = play(SidePlan(blue, assets, sc['terrain'], raw_b, cfg, mb, w),
                   SidePlan(red, assets, sc['terrain'], raw_r, cfg, mr, w), pb, pr, noise[sid], cfg)
        n = cfg.R
        mine = [sid, cond, str(n), str(sum(res['wins'])), ''.join('1' if w else '0' for w in res['wins']),
                f6(sum(res['lb']) / n), f6(sum(res['lr']) / n), f6(sum(res['steps']) / n), branch_choices(res)]
        notes = ['replications.csv %s: oracle %r, advplan %r' % (name, a, b) for name, a, b in
                 zip(['replications', 'blue_wins', 'blue_won', 'mean_blue_loss', 'mean_red_loss', 'mean_steps',
                      'branch_choices'], mine[2:], ref[2:]) if not same_text(a, b)]
        for name, val in (('blue_win_rate', sum(res['wins']) / n), ('blue_final_strength', sum(res['fb']) / n),
                          ('red_final_strength', sum(res['fr']) / n)):
            if not same_text(f6(val), row[name]):
                notes.append('per_scenario.csv %s: oracle %s, advplan %s' % (name, f6(val), row[name]))
        mine_eng = [[sid, cond, str(r), str(c['start']), str(c['end']), ';'.join(c['key'][0]), ';'.join(c['key'][1]),
                     ';'.join(c['where']), f6(c['bs']), f6(c['rs']), f6(c['bb']), f6(c['ba']), f6(c['rb']), f6(c['ra'])]
                    for r, c in res['eng']]
        theirs = engs[(sid, cond)]
        if len(mine_eng) != len(theirs) or any(not same_text(x, y) for a, b in zip(mine_eng, theirs) for x, y in zip(a, b)):
            notes.append('engagements.csv: %d rows from the oracle, %d from advplan, first difference %s' % (
                len(mine_eng), len(engs[(sid, cond)]),
                next(((a, b) for a, b in zip(mine_eng, engs[(sid, cond)]) if a != b), 'in the count')))
        if notes:
            diffs.append((sid, cond, notes))
        else:
            same += 1
    print('engagement oracle: %d of %d cells identical%s%s' % (same, len(reps) - skipped,
                                                               ' within %g' % tolerance if tolerance else '',
                                                             ' (%d sweep points not compared)' % skipped if skipped else ''))
    for sid, cond, notes in diffs[:10]:
        print('  %s %s' % (sid, cond))
        for note in notes[:4]:
            print('    ' + note)
    return 0 if not diffs and same else 1


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
