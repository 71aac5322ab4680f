-- A Java step in a Lua program's flow (issue 23): its asi.tool() is the Lua
-- Tool's loop, lent to Java, and its timers run there
-- (org.futoin.polyglot.Probe.timers: an immediate, a deferred cancelled
-- before it is due, a deferred, an execute(), in that order).
--
-- Run by bindings/java/polyglot.sh test with the environment of
-- tests/polyglot/run.sh (LUA_PATH/LUA_CPATH with the rock) and CLASSPATH
-- naming the jar (where the library finds the Java plug-in) and the Java
-- test classes. Last line "java-in-lua: N passed, M failed".
local fa = require "futoin_async"

local passed, failed = 0, 0
local function check(ok, what)
    if ok then
        passed = passed + 1
    else
        failed = failed + 1
        io.stderr:write("FAIL java-in-lua: " .. what .. "\n")
    end
end

local tool = fa.Tool()
for n = 1, 3 do -- the same loop, flow after flow
    local root = fa.AsyncSteps(tool)
    root:add_foreign("java", "org.futoin.polyglot.Probe", "timers")
    local ok, text = pcall(root.run, root)
    check(ok and text == "immediate,deferred,execute",
          "flow " .. n .. ": " .. tostring(ok) .. " " .. tostring(text))
end
print(("java-in-lua: %d passed, %d failed"):format(passed, failed))
os.exit(failed == 0 and 0 or 1)
