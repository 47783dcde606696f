#!/usr/bin/env python3
"""Function lengths in lines, by brace matching (C++) and indentation (Python).

Usage: scripts/function_lengths.py [--over N] [DIR ...]   (default: src include python, N = 60)

Prints "LINES PATH:LINE NAME" for every function longer than N lines, longest first. C++ comments, string and raw
string literals are blanked before matching; a function is an outermost brace block whose opening brace follows a
closing parenthesis (with qualifiers, a trailing return type or an initializer list's end), so lambdas and local
blocks count towards their function. A rough tool for the size rule (docs/DECISIONS.md), not a parser.
"""
import argparse
import os
import re


def blank(src):
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i)
            j = n if j < 0 else j
        elif src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
        elif src.startswith('R"', i) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == '_')):
            k = src.find('(', i)
            d = src[i + 2:k]
            j = src.find(')' + d + '"', k)
            j = n if j < 0 else j + len(d) + 2
        elif c == '"' or (c == "'" and not (i > 0 and src[i - 1].isalnum() and i + 1 < n and src[i + 1].isalnum())):
            j = i + 1
            while j < n and src[j] != c and src[j] != '\n':
                j += 2 if src[j] == '\\' else 1
            j += 1
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r'[^\n]', ' ', src[i:j]))
        i = j
    return ''.join(out)


SIG_END = re.compile(r'\)\s*(const|noexcept|override|final|mutable|->\s*[\w:<>,\s\*&]+|\s)*$')
CONTROL = re.compile(r'\b(if|for|while|switch|catch)\s*\(.*\)\s*$')


def signature_name(s, brace):
    """The name before the parameter list whose ')' is the last one before the body's brace."""
    close = s.rfind(')', 0, brace)
    depth, i = 0, close
    while i >= 0:
        depth += {')': 1, '(': -1}.get(s[i], 0)
        if depth == 0:
            break
        i -= 1
    m = re.search(r'([~\w:]+(?:<[^<>()]*>)?|operator\s*\S+)\s*$', s[max(0, i - 200):i])
    return m.group(1) if m else '?'


def cpp_functions(path):
    src = open(path, errors='replace').read()
    s = blank(src)
    stack, res = [], []
    for idx, ch in enumerate(s):
        if ch == '{':
            pre = re.sub(r'\s+', ' ', s[max(0, idx - 300):idx]).rstrip()
            stack.append((idx, bool(SIG_END.search(pre)) and not CONTROL.search(pre[-200:])))
        elif ch == '}' and stack:
            start, is_fn = stack.pop()
            if is_fn and not any(f for _, f in stack):
                first = s.count('\n', 0, start) + 1
                name = signature_name(s, start)
                res.append((s.count('\n', 0, idx) + 2 - first, path, first, name))
    return res


def py_functions(path):
    lines = open(path, errors='replace').read().split('\n')
    res = []
    for i, line in enumerate(lines):
        m = re.match(r'(\s*)(?:async\s+)?def (\w+)', line)
        if not m:
            continue
        indent, last = len(m.group(1)), i
        for j in range(i + 1, len(lines)):
            t = lines[j]
            if t.strip() and len(t) - len(t.lstrip()) <= indent and not t.strip().startswith(')'):
                break
            if t.strip():
                last = j
        res.append((last - i + 1, path, i + 1, m.group(2)))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--over', type=int, default=60)
    ap.add_argument('dirs', nargs='*', default=['src', 'include', 'python'])
    a = ap.parse_args()
    found = []
    for root in a.dirs:
        for dp, _, fn in os.walk(root):
            for f in sorted(fn):
                p = os.path.join(dp, f)
                if f.endswith(('.cpp', '.hpp', '.h', '.cc')):
                    found += cpp_functions(p)
                elif f.endswith('.py'):
                    found += py_functions(p)
    for n, path, line, name in sorted(found, key=lambda r: (-r[0], r[1], r[2])):
        if n > a.over:
            print(f'{n} {path}:{line} {name}')


if __name__ == '__main__':
    main()
