--- A Lua program of the installed rock (lua5.4 with what `luarocks path`
-- sets, tests/polyglot/installed/run.sh) hosting ONE flow with steps of C,
-- Python and Java: the library finds the Python and Java plug-ins through
-- VIRTUAL_ENV and CLASSPATH, the C steps are the user's shared object
-- (arg[1]).
--
-- Prints "trail lua ...", "cell lua LANG ok" or "cell lua LANG FAIL: why"
-- per language, "frame lua LANG I LANGUAGE FUNCTION FILE LINE" for each
-- frame of the async stack LANG's error had in the handler, and "map FILE"
-- for every libfutoin_async*, libuv* and libfutoin_host_* file mapped into
-- the process.
local fa = require "futoin_async"

local others = { { "c", arg[1] }, { "python", "user_steps" }, { "java", "example.UserSteps" } }
local expected = "lua>c>python>java"
local trail, count = "", -1
local errors = {}
local stacks = {}

local root = fa.AsyncSteps()
root:add(function(asi) return "lua", 1 end)
for _, o in ipairs(others) do
    root:add_foreign(o[1], o[2], "append")
end
root:add(function(asi, t, n) trail, count = t, n end)
for _, o in ipairs(others) do
    root:add(function(asi)
        asi:add_foreign(o[1], o[2], "fail")
    end, function(asi, code)
        errors[o[1]] = { code, asi:state().error_info }
        stacks[o[1]] = asi:async_stack() or {}
        asi:success()
    end)
end
local ok, err = pcall(root.run, root)
if not ok then
    print("unhandled", tostring(err))
end

print("trail lua " .. tostring(trail) .. " " .. tostring(count))
for _, o in ipairs(others) do
    local lang, e = o[1], errors[o[1]] or {}
    if trail ~= expected or count ~= 1 + #others then
        print(("cell lua %s FAIL: values '%s' %s, expected '%s' %d"):format(
            lang, tostring(trail), tostring(count), expected, 1 + #others))
    elseif e[1] ~= "UserError" or e[2] ~= lang then
        print(("cell lua %s FAIL: error '%s' '%s', expected 'UserError' '%s'"):format(
            lang, tostring(e[1]), tostring(e[2]), lang))
    else
        print(("cell lua %s ok"):format(lang))
    end
    for i, f in ipairs(stacks[lang] or {}) do
        print(("frame lua %s %d %s %s %s %d"):format(lang, i - 1, tostring(f.language),
            tostring(f["function"] or "?"), tostring(f.file or "?"):match("([^/]*)$"), f.line or 0))
    end
end

local seen = {}
for line in io.lines("/proc/self/maps") do
    local path = line:match("(/.*)$")
    local base = path and path:match("([^/]*)$") or ""
    if path and not seen[path] and (base:find("^libfutoin_async") or base:find("^libuv[.-]")
                                    or base:find("^libfutoin_host_")) then
        seen[path] = true
        print("map " .. path)
    end
end
