#!/usr/bin/env python3
"""Runs every log of tests/data/logs through `k3plan validate --log` with its header's hints
(the same flags a user would pass) and prints one line per log. Exploration aid; the test of
record is tests/test_validate_logs.cpp."""
import json, os, subprocess, sys
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
k3 = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, 'build', 'k3plan')
CAT = {'h100','h200','b200','b300','gb200','gb300','mi300x','mi325x','mi350x','mi355x'}
rows = []
for eng in ('vllm', 'sglang'):
    d = os.path.join(root, 'tests', 'data', 'logs', eng)
    for f in sorted(os.listdir(d)):
        p = os.path.join(d, f); h = {}
        for line in open(p, errors='replace'):
            if not line.startswith('#'): break
            if ':' in line:
                k, v = line[1:].split(':', 1); h[k.strip()] = v.split('  #')[0].strip()
        args = [k3, 'validate', '--log', p, '--format', 'json']
        cfg = h.get('config', 'missing')
        if cfg and cfg != 'missing' and not cfg.startswith('missing'):
            args += ['-m', os.path.join(root, 'tests', 'data', cfg.split()[0])]
        g = h.get('gpu', '').split()[0].lower() if h.get('gpu') else ''
        if g in CAT: args += ['-g', g]
        ver = h.get('engine_version', '')
        if ver and not ver.startswith('unknown'): args += ['--engine-version', ver.split()[0]]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode not in (0, 1):
            rows.append((eng, f, None, r.stderr.strip()[:150])); continue
        j = json.loads(r.stdout)
        rows.append((eng, f, j['kv_cache_tokens_error_pct'], '%s %s lg=%s pr=%s by=%s' % (j['engine_version'], j['gpu'], j['logged']['kv_cache_tokens'], j['predicted']['kv_cache_tokens'], j['explained_by'])))
ok = [r for r in rows if r[2] is not None]
for r in rows:
    print('%-7s %-70s %s %s' % (r[0], r[1][:70], ('%+8.2f%%' % r[2]) if r[2] is not None else '   ERROR', r[3]))
errs = sorted(abs(r[2]) for r in ok)
if errs:
    print('ran %d/%d; median |err| %.2f%%; within 3%%: %d' % (len(ok), len(rows), errs[len(errs)//2], sum(e <= 3 for e in errs)))
