"""A Python program of the installed wheel (the venv's python3,
tests/polyglot/installed/run.sh) hosting ONE flow with steps of C, Lua and
Java: the library finds the Lua and Java plug-ins through LUA_CPATH and
CLASSPATH, the C steps are the user's shared object (argv[1]).

Prints "trail python ...", "cell python LANG ok" or "cell python LANG
FAIL: why" per language, "frame python LANG I LANGUAGE FUNCTION FILE LINE"
for each frame of the async stack LANG's error had in the handler, and
"map FILE" for every libfutoin_async*, libuv* and libfutoin_host_* file
mapped into the process."""
import os
import sys

from futoin_async import AsyncSteps

OTHERS = [("c", sys.argv[1]), ("lua", "user_steps"), ("java", "example.UserSteps")]
EXPECTED = ("python>" + ">".join(lang for lang, _ in OTHERS), 1 + len(OTHERS))
got = {}
stacks = {}


def check(asi, trail, n):
    got["values"] = (trail, n)


def failing(lang, module):
    def body(asi):
        asi.add_foreign(lang, module, "fail")

    def handler(asi, code):
        got[lang] = (code, asi.error_info)
        stacks[lang] = [(f.language, f.function or "?", os.path.basename(f.file or "?"), f.line)
                        for f in asi.async_stack or ()]
        asi.success()
    return body, handler


root = AsyncSteps()
root.add(lambda asi: ("python", 1))
for lang, module in OTHERS:
    root.add_foreign(lang, module, "append")
root.add(check)
for lang, module in OTHERS:
    root.add(*failing(lang, module))
try:
    root.run()
except Exception as e:  # reported below, as a failed cell
    print("unhandled", repr(e))

print("trail python", *got.get("values", ("", -1)))
for lang, _ in OTHERS:
    if got.get("values") != EXPECTED:
        print(f"cell python {lang} FAIL: values {got.get('values')}, expected {EXPECTED}")
    elif got.get(lang) != ("UserError", lang):
        print(f"cell python {lang} FAIL: error {got.get(lang)}, expected ('UserError', '{lang}')")
    else:
        print(f"cell python {lang} ok")
    for i, frame in enumerate(stacks.get(lang, ())):
        print("frame python", lang, i, *frame)

seen = []
with open("/proc/self/maps") as maps:
    for line in maps:
        path = line[line.find("/"):].rstrip("\n") if "/" in line else ""
        if os.path.basename(path).startswith(("libfutoin_async", "libuv.", "libuv-",
                                              "libfutoin_host_")) and path not in seen:
            seen.append(path)
            print("map", path)
