--[[ One kind of Lua op, N times, for bench/callgrind.sh (instructions per
op: the runner runs this under callgrind with N and 2N and divides the
difference by N, so start-up, require and the warm-up cancel).

  lua5.4 bench/lua/callgrind_ops.lua KIND N WARM  (LUA_PATH/LUA_CPATH of a
                                                   tree with the futoin_async rock)
KIND:
  step       a root of N steps `function(asi) end`: add + execute + run per step
  success    a root of N steps `function(asi, v) asi:success((v or 0) + 1) end`
  coroutine  the language's own primitive: one coroutine resumed N times,
             passing an integer each way (v = yield(v + 1))

Each kind first runs once with WARM (the warm-up: pools, free lists and the
GC's heap grown to the largest run; the runner passes the same WARM >= 2N
to both runs, so it cancels), then with N; the last line is `OPS N`.
]]
local fa = require "futoin_async"

local tool = fa.Tool()

local kinds = {}

function kinds.step(n)
    local root = fa.AsyncSteps(tool)
    local f = function(asi) end
    for _ = 1, n do root:add(f) end
    root:execute()
    tool:run()
end

function kinds.success(n)
    local root = fa.AsyncSteps(tool)
    local f = function(asi, v) asi:success((v or 0) + 1) end
    for _ = 1, n do root:add(f) end
    root:execute()
    tool:run()
end

function kinds.coroutine(n)
    local co = coroutine.wrap(function(v)
        local yield = coroutine.yield
        for _ = 1, n do v = yield(v + 1) end
    end)
    local v = 0
    for _ = 1, n do v = co(v) end
    assert(v == n)
end

local kind = arg[1]
local n = math.tointeger(tonumber(arg[2] or ""))
local warm = math.tointeger(tonumber(arg[3] or ""))
if not kinds[kind] or not n or n < 1 or not warm or warm < 1 then
    io.stderr:write("usage: callgrind_ops.lua step|success|coroutine N WARM\n")
    os.exit(2)
end
kinds[kind](warm)
kinds[kind](n)
print("OPS " .. n)
