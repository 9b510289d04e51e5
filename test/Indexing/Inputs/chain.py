"""Writes HLO modules of long call chains for deep-nesting.test.

chain.py call N     c_i calls c_{i-1}, N levels, f32[2]
chain.py fusion N   the same with kLoop fusions
chain.py diamond N  c_i calls c_{i-1} twice and adds the results, f32[]
"""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
lines = ["HloModule m"]
if kind == "diamond":
    lines.append("c0 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}")
    for i in range(1, n):
        lines.append(
            f"c{i} {{\n  p = f32[] parameter(0)\n"
            f"  a = f32[] call(p), to_apply=c{i-1}\n"
            f"  b = f32[] call(p), to_apply=c{i-1}\n"
            f"  ROOT r = f32[] add(a, b)\n}}")
    lines.append(f"ENTRY main {{\n  x = f32[] constant(1)\n"
                 f"  ROOT r = f32[] call(x), to_apply=c{n-1}\n}}")
else:
    call = ("call(p), to_apply=c{}" if kind == "call" else
            "fusion(p), kind=kLoop, calls=c{}")
    lines.append("c0 {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] negate(p)\n}")
    for i in range(1, n):
        lines.append(f"c{i} {{\n  p = f32[2] parameter(0)\n"
                     f"  ROOT r = f32[2] {call.format(i - 1)}\n}}")
    top = call.replace("(p)", "(x)").format(n - 1)
    lines.append(f"ENTRY main {{\n  x = f32[2] parameter(0)\n"
                 f"  ROOT r = f32[2] {top}\n}}")
print("\n".join(lines))
