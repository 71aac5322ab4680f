-- Shared by the specs: the module under test, traces compared whole with
-- tests/expected/*.trace, and a guard that the module comes from the
-- installed tree (FUTOIN_LUA_TREE, set by test.sh), never the build.
local fa = require "futoin_async"
local assert = require "luassert"

local H = { fa = fa }

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
H.expected_dir = os.getenv("FUTOIN_EXPECTED_DIR") or (here .. "../../../tests/expected/")
H.repo = H.expected_dir:gsub("/tests/expected/?$", "") -- the checkout

local Trace = {}
Trace.__index = Trace

function Trace:__call(...)
    local parts = table.pack(...)
    for i = 1, parts.n do parts[i] = tostring(parts[i]) end
    self.lines[#self.lines + 1] = table.concat(parts, " ", 1, parts.n)
end

function Trace:expect(name)
    local f = assert(io.open(H.expected_dir .. name .. ".trace", "rb"))
    local want = {}
    for line in f:lines() do want[#want + 1] = line end
    f:close()
    assert.are.same(want, self.lines)
end

function H.trace()
    return setmetatable({ lines = {} }, Trace)
end

--- Run `fn` and return the error it raised (asserting that it raised).
function H.raises(fn, ...)
    local ok, e = pcall(fn, ...)
    assert(not ok, "expected an error")
    return e
end

--- Run a Lua script in a new lua5.4 process (same LUA_PATH/LUA_CPATH,
-- `env` prefixed, e.g. "FUTOIN_LUA_FULL_HANDLES=1"); returns what it printed.
function H.run_lua(script, arg1, env)
    local file = os.tmpname()
    local f = assert(io.open(file, "w"))
    f:write(script)
    f:close()
    local p = io.popen(("%s lua5.4 %s %s 2>&1"):format(env or "", file, arg1 or ""))
    local out = p:read("a")
    p:close()
    os.remove(file)
    return out
end

--- Run `tool` until nothing is left: on a virtual-time Tool, what is due
-- now, then timer by timer (tool:advance(tool:next_due())) until no timer
-- is pending; on the wall clock, tool:run().
function H.drive(tool)
    tool:run()
    while tool:is_virtual() and tool:next_due() do
        tool:advance(tool:next_due())
    end
end

--- Baseline of what the glue holds: registry refs and callback records.
function H.settle()
    collectgarbage()
    collectgarbage()
    return fa.refs()
end

return H
