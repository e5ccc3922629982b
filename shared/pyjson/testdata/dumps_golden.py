# Writes dumps_golden.json: for each input s, [s, json.dumps(json.loads(s), separators=(",", ":"),
# ensure_ascii=True), the same with ensure_ascii=False]. Run with CPython: python3 dumps_golden.py
import json

inputs = [
    '{"b":1,"a":[1.50,2,-0,1e5,1E-7,0.1,123456789012345678901234567890],"b":"last"}',
    '["h\\u00e9llo","\\u0000\\u001f\\u007f\\u0080","tab\\tnl\\nquote\\"back\\\\slash","\\b\\f\\r","emoji \\ud83d\\ude00","</script>&"]',
    '{"nested":{"x":null,"y":true,"z":false},"e":{},"l":[]}',
    '[NaN,Infinity,-Infinity,1e400,-0.0,5e-324,1e16,1e15,9007199254740993.0,1.7976931348623157e308]',
    '"\\u2028\\u2029\\ufeff\\u200b\\u00a0\\u0085"',
    '{"queries":["equal(\\"status\\", [\\"open\\"])"],"limit":25,"caf\\u00e9":"cr\\u00e8me br\\u00fbl\\u00e9e"}',
]
rows = []
for s in inputs:
    v = json.loads(s)
    rows.append([s, json.dumps(v, separators=(",", ":"), ensure_ascii=True),
                 json.dumps(v, separators=(",", ":"), ensure_ascii=False)])
with open("dumps_golden.json", "w", encoding="utf-8") as f:
    json.dump(rows, f, ensure_ascii=False, indent=1)
    f.write("\n")
