#!/usr/bin/env lua5.4
--[[ Cost of one Lua step of futoin_async next to the same chain written with
plain Lua coroutines (resume/yield), in one run.

  eval "$(luarocks --lua-version=5.4 --tree TREE path)"
  lua5.4 bench/lua/bench_lua.lua [N]

Needs the futoin_async rock installed (bindings/lua/README.md). Prints ns per
step, the median of 5 runs of N steps (default 200,000) after one warm-up run:
  - futoin add():      a root with N steps `function(asi) end` (implicit success)
  - futoin repeat():   one repeat_loop(N) whose body is a Lua function
  - futoin success(v): N steps each passing one integer on with asi:success(v + 1)
  - coroutine resume/yield:   one coroutine yields N times, the driver resumes it
  - coroutine + value:        the same, passing an integer on each way (v + 1)
  - coroutine per step:       N coroutines created, resumed, finished (one per step)
  - reference rows: one call of a C function (math.type) and one pcall,
    to show how fast this machine runs Lua right now
Each futoin figure includes adding the steps, executing and Tool:run().
]]
local fa = require "futoin_async"

local N = tonumber(arg and arg[1]) or 200000
local RUNS = 5
local clock = os.clock

local function median(fn)
    local t = {}
    fn(N) -- warm-up, not counted: the first run also pays for growing pools
    for i = 1, RUNS do
        collectgarbage()
        t[i] = fn(N) / N * 1e9
    end
    table.sort(t)
    return t[(RUNS + 1) // 2], t[1], t[RUNS]
end

local tool = fa.Tool()

local function fa_add(n)
    local root = fa.AsyncSteps(tool)
    local f = function(asi) end
    local t = clock()
    for _ = 1, n do root:add(f) end
    root:execute()
    tool:run()
    return clock() - t
end

local function fa_repeat(n)
    local root = fa.AsyncSteps(tool)
    local t = clock()
    root:repeat_loop(n, function(asi, i) end)
    root:execute()
    tool:run()
    return clock() - t
end

local function fa_success(n)
    local root = fa.AsyncSteps(tool)
    local f = function(asi, v) asi:success((v or 0) + 1) end
    local t = clock()
    for _ = 1, n do root:add(f) end
    root:execute()
    tool:run()
    return clock() - t
end

local function co_yield(n)
    local t = clock()
    local co = coroutine.wrap(function()
        local yield = coroutine.yield
        for _ = 1, n do yield() end
    end)
    for _ = 1, n do co() end
    return clock() - t
end

local function co_value(n)
    local t = clock()
    local co = coroutine.wrap(function(v)
        local yield = coroutine.yield
        for _ = 1, n do v = yield(v + 1) end
    end)
    local v = 0
    for _ = 1, n do v = co(v) end
    assert(v == n)
    return clock() - t
end

local function co_per_step(n)
    local t = clock()
    local create, resume = coroutine.create, coroutine.resume
    local body = function(v) return v + 1 end
    local v = 0
    for _ = 1, n do
        local _, r = resume(create(body), v)
        v = r
    end
    return clock() - t
end

-- Reference rows: what one call into C and one pcall cost in this VM right
-- now (the machine is shared; its speed varies by ~1.5x between runs).
local function c_call(n)
    local mt = math.type
    local t = clock()
    for i = 1, n do mt(i) end
    return clock() - t
end

local function lua_pcall(n)
    local f = function() end
    local t = clock()
    for _ = 1, n do pcall(f) end
    return clock() - t
end

local rows = {
    { "futoin add() step", fa_add },
    { "futoin repeat_loop() body", fa_repeat },
    { "futoin step + success(v)", fa_success },
    { "coroutine resume/yield", co_yield },
    { "coroutine resume/yield + value", co_value },
    { "coroutine per step (create+resume)", co_per_step },
    { "reference: one C function call", c_call },
    { "reference: one pcall", lua_pcall },
}
print(("%s, futoin_async %s, N=%d, median of %d runs (min-max)"):format(
    _VERSION, fa.version(), N, RUNS))
local worst = 0
for i, row in ipairs(rows) do
    local med, lo, hi = median(row[2])
    row[3] = med
    if i <= 3 then worst = math.max(worst, med) end
    print(("%-36s %8.1f ns/step  (%.1f-%.1f)"):format(row[1], med, lo, hi))
end
print(("target: <= 250 ns per Lua step (add, repeat, success) -> %s (worst %.0f ns)"):format(
    worst <= 250 and "MET" or "NOT MET", worst))
