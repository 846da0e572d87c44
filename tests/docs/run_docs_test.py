#!/usr/bin/env python3
"""run_docs_test.py: the shell commands of documentation pages, run against a
build, so that a page that lies fails a test.

    run_docs_test.py --build BUILD --src SRC --work WORK PAGE.md...

What runs: every fenced block whose info string is `sh`, in page order, in one
bash process per page (variables, `cd` and files carry from block to block),
in a fresh folder WORK/<page> that holds links to the checkout's top-level
entries and `build` -> BUILD, so `scenarios/...`, `./build/bin/hetsim` and
`export PATH="$PWD/build/bin:$PATH"` mean what they mean at the top of a
checkout, and every output lands in WORK. Markers, HTML comments on the line
just before a block's opening fence (invisible when the page is rendered):
    <!-- docs-test: skip REASON -->   the block is not run (say why: it
                                      installs packages, takes long, needs a
                                      board or the network)
    <!-- docs-test: exit N -->        the block's last command must exit N
                                      (default: every command exits 0)
A block fenced as `text` right after an `sh` block (blank lines between at
most) is the block's expected output, stdout and stderr together, compared
line by line; a line `...` in it stands for any number of lines, and `...`
within a line for any text (for what is not deterministic: timings, figures
that depend on the machine). Blocks of other kinds (console,
json, python, ...) are illustrations and are not run.
Exit 0 when every block ran as the page says, 1 otherwise (one line per
failure naming the page, the block's line and the first difference), 2 for
bad usage. Prints "N passed, N failed" last.
Rejected: doctest-style `$ cmd` transcripts (a page's reader copies the
commands; prompts in front would stop them pasting), and running each block
in its own shell (the pages' blocks build on each other, as a reader's do).
"""
import argparse, os, re, shutil, subprocess, sys

FENCE = re.compile(r'^(`{3,})\s*([A-Za-z0-9_+-]*)\s*(.*)$')
MARK = re.compile(r'^<!--\s*docs-test:\s*(skip|exit)\b\s*(.*?)\s*-->\s*$')


def blocks(path):
    """[(line, kind, text, marker)]: each fenced block of the page."""
    lines = open(path, encoding='utf-8').read().split('\n')
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, kind, start = m.group(1), m.group(2), i
        j = start - 1
        while j >= 0 and lines[j].strip() == '':
            j -= 1
        mk = MARK.match(lines[j]) if j >= 0 and j == start - 1 else None
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        out.append((start + 1, kind, '\n'.join(body), (mk.group(1), mk.group(2)) if mk else None,
                    i))
        i += 1
    return out


def plan(path):
    """[(line, script, expected or None, exit or None, skip or None)]"""
    bl, res = blocks(path), []
    for k, (line, kind, text, mk, end) in enumerate(bl):
        if kind != 'sh':
            continue
        expected = None
        if k + 1 < len(bl) and bl[k + 1][1] == 'text':
            between = open(path, encoding='utf-8').read().split('\n')[end + 1:bl[k + 1][0] - 1]
            if all(s.strip() == '' for s in between):
                expected = bl[k + 1][2]
        skip = mk[1] or 'marked skip' if mk and mk[0] == 'skip' else None
        code = int(mk[1]) if mk and mk[0] == 'exit' else None
        res.append((line, text, expected, code, skip))
    return res


def same(e, g):
    """One expected line against one output line: equal, or, when the
    expected line holds `...`, equal around it (`...` is any text)."""
    if '...' not in e:
        return e == g
    return re.fullmatch('.*'.join(re.escape(p) for p in e.split('...')), g) is not None


def match(expected, got):
    """None when got (lines) matches expected (lines, with `...`), else the
    first difference as text."""
    e, g = expected, got
    def m(i, j):
        while i < len(e):
            if e[i] == '...':
                return any(m(i + 1, k) for k in range(j, len(g) + 1))
            if j >= len(g) or not same(e[i], g[j]):
                return False
            i, j = i + 1, j + 1
        return j == len(g)
    if m(0, 0):
        return None
    for n, (a, b) in enumerate(zip(e, g)):
        if a != '...' and not same(a, b):
            return 'line %d: expected %r, got %r' % (n + 1, a, b)
    if len(g) > len(e):
        return 'line %d: unexpected %r' % (len(e) + 1, g[len(e)])
    return 'line %d: expected %r, got the end of the output' % (len(g) + 1, e[len(g)] if len(g) < len(e) else '')


def run_page(page, args):
    rel = os.path.relpath(page, args.src)
    work = os.path.join(args.work, re.sub(r'[^A-Za-z0-9]+', '-', rel))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for name in os.listdir(args.src):
        if name in ('.git',) or name.startswith('build'):
            continue
        os.symlink(os.path.join(args.src, name), os.path.join(work, name))
    os.symlink(os.path.abspath(args.build), os.path.join(work, 'build'))
    steps = plan(page)
    script = ['cd %s || exit 99' % sh_quote(work), '__failed=0', "trap '__failed=1' ERR"]
    for n, (line, text, expected, code, skip) in enumerate(steps):
        if skip:
            continue
        script += ['__failed=0', '{', text, '} >%s/.out.%d 2>&1' % (sh_quote(work), n),
                   'echo "$? $__failed" >%s/.rc.%d' % (sh_quote(work), n)]
    env = dict(os.environ)
    env.pop('HETSIM_PROFILE_PATH', None)
    env['LC_ALL'] = 'C'
    try:
        subprocess.run(['bash', '-c', '\n'.join(script)], env=env, timeout=args.timeout,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        print('docs test: %s: did not finish in %d s' % (rel, args.timeout))
        return 0, 1, 0
    passed = failed = skipped = 0
    for n, (line, text, expected, code, skip) in enumerate(steps):
        where = '%s:%d' % (rel, line)
        if skip:
            skipped += 1
            continue
        try:
            last, any_failed = open('%s/.rc.%d' % (work, n)).read().split()
            out = open('%s/.out.%d' % (work, n), encoding='utf-8', errors='replace').read()
        except (OSError, ValueError):
            print('docs test: %s: the block did not run (an earlier block ended the shell?)' % where)
            failed += 1
            continue
        why = None
        if code is None and (last != '0' or any_failed != '0'):
            why = 'a command failed (exit status %s): %s' % (last, first_line(out))
        elif code is not None and int(last) != code:
            why = 'exit status %s, the page says %d: %s' % (last, code, first_line(out))
        elif expected is not None:
            got = out.split('\n')
            if got and got[-1] == '':
                got.pop()
            exp = expected.split('\n')
            diff = match(exp, got)
            if diff:
                why = 'output differs from the page: ' + diff
        if why:
            print('docs test: %s: %s' % (where, why))
            failed += 1
        else:
            passed += 1
    print('docs test: %s: %d blocks run, %d skipped, %d failed' % (rel, passed + failed, skipped, failed))
    return passed, failed, skipped


def first_line(out):
    lines = [s for s in out.split('\n') if s.strip()]
    return lines[-1][:200] if lines else '(no output)'


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--src', required=True)
    ap.add_argument('--work', required=True)
    ap.add_argument('--timeout', type=int, default=240)
    ap.add_argument('pages', nargs='+')
    args = ap.parse_args()
    args.src = os.path.abspath(args.src)
    args.work = os.path.abspath(args.work)
    tp = tf = 0
    for p in args.pages:
        page = p if os.path.isabs(p) else os.path.join(args.src, p)
        if not os.path.isfile(page):
            print('docs test: %s: no such page' % p)
            tf += 1
            continue
        a, b, _ = run_page(page, args)
        tp, tf = tp + a, tf + b
    print('%d passed, %d failed' % (tp, tf))
    return 1 if tf else 0


if __name__ == '__main__':
    sys.exit(main())
