"""How Python prints JSON numbers, for starpo's chat-template number test (test/unit/agent/template-numbers.test.ts).

For each JSON number text, json.dumps(json.loads(text)) and str(json.loads(text)): what transformers' chat templates
print through `tojson` and `{{ x }}`. Standard library only; run once from the repository root:

    python3 scripts/python_numbers_reference.py
"""
import json
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "test" / "fixtures" / "chat" / "python-numbers.json"

TEXTS = [
    "0", "-0", "1", "-1", "42", "9007199254740993", "12345678901234567890", "-98765432109876543210",
    "0.0", "-0.0", "1.0", "2.50", "1e3", "1E3", "1.5e20", "1e16", "1e15", "123456789012345678.0",
    "0.1", "0.0001", "0.00001", "1e-7", "-2.5e-8", "3.141592653589793", "1e308", "5e-324", "1.7976931348623157e308",
    "100.0", "0.3", "1e22", "1e21", "9999999999999998.0", "12345.6789e-3",
]


def main():
    rng = random.Random(7)
    texts = list(TEXTS)
    for _ in range(300):  # random doubles across the exponent range, written as JSON floats
        x = rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)
        texts.append(repr(x))
    cases = []
    for text in texts:
        value = json.loads(text)
        cases.append({"text": text, "dumps": json.dumps(value), "str": str(value)})
    OUT.write_text(json.dumps({"python": sys.version.split()[0], "cases": cases}, indent=0) + "\n", encoding="utf-8")
    print(f"{len(cases)} numbers -> {OUT}")


if __name__ == "__main__":
    main()
