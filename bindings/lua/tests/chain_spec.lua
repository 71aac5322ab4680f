-- Consecutive Lua steps in one call from the core (glue/lua_trampoline.c:
-- the runtime's chain(), a success() of scalars kept by the step's call):
-- what a flow does must not tell whether its steps ran chained or one by
-- one through the runtime. Values, their types and their count; the order
-- in which the runtime sees what a step did after success(); errors and
-- their tracebacks in a step that was not the first of a run; handles of
-- chained steps once finished; other flows still getting their turn;
-- nothing left anchored.
local H = require "helper"
local fa = H.fa

describe("chained steps", function()
    local tool
    before_each(function() tool = fa.Tool() end)

    it("pass kept values on as they are: types and count", function()
        local seen = {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:success(1) end)
        root:add(function(asi, v) asi:success(v + 1, 2.0, true, false) end)
        root:add(function(asi, ...)
            local a, b, c, d = ...
            seen[#seen + 1] = { select("#", ...), a, math.type(a), b, math.type(b), c, d }
            asi:success()
        end)
        root:add(function(asi, ...) seen[#seen + 1] = select("#", ...) end) -- implicit success()
        root:add(function(asi, ...)
            seen[#seen + 1] = select("#", ...)
            asi:success(math.maxinteger, math.mininteger, -0.0, 0.5)
        end)
        root:add(function(asi, a, b, c, d)
            seen[#seen + 1] = { a, b, 1 / c, d, math.type(c) }
            asi:success(a == math.maxinteger)
        end)
        local r = root:run()
        assert.are.same({
            { 4, 2, "integer", 2.0, "float", true, false },
            0,
            0,
            { math.maxinteger, math.mininteger, -math.huge, 0.5, "float" },
        }, seen)
        assert.is_true(r)
        assert.are.equal(0, tool:misuse_count())
    end)

    it("give a kept success() to the runtime before what the step did next", function()
        local log = {}
        local function after(name, fn)
            local root = fa.AsyncSteps(tool)
            root:add(function(asi) asi:success(1); return fn(asi) end)
            root:add(function(asi, v) log[#log + 1] = name .. " next " .. tostring(v) end)
            local ok, e = pcall(root.run, root)
            if not ok then
                log[#log + 1] = name .. " " .. e.code .. ": " .. tostring(e.info):match("^[^\n]*")
            end
        end
        after("status", function(asi) log[#log + 1] = "status " .. asi:status() end)
        after("wait", function(asi) asi:wait_external() end)
        after("add", function(asi)
            local ok, e = pcall(asi.add, asi, function() end)
            log[#log + 1] = "add " .. tostring(ok) .. " " .. e:match("add%(%): .*")
        end)
        after("twice", function(asi)
            local ok, e = pcall(asi.success, asi, 2)
            log[#log + 1] = "twice " .. tostring(ok) .. " " .. e:match("success%(%): .*")
        end)
        after("raise", function(asi) error("boom") end)
        after("return", function(asi) return 5 end)
        assert.are.same({
            "status completed", "status next 1",
            "wait next 1",
            "add false add(): after success()", "add next 1",
            "twice false success(): called twice", "twice next 1",
            "raise InternalError: error() after success()",
            "return InternalError: error() after success()",
        }, log)
    end)

    it("report an error of a step after the first of a run as the runtime's call would", function()
        -- the same failing function as the first step of a flow and as the
        -- third, called from the same line: the same error_info, traceback
        -- included (the binding's frame between chained steps is left out)
        local function bad(asi, v) error("bad " .. tostring(v)) end
        local infos = {}
        for n = 0, 2 do
            local root = fa.AsyncSteps(tool)
            for _ = 1, n do root:add(function(asi) asi:success(7) end) end
            root:add(bad)
            local ok, e = pcall(root.run, root)
            assert.is_false(ok)
            infos[n] = e.info:gsub("bad 7", "bad nil")
            assert.are.equal(debug.getinfo(bad, "S").linedefined, e.async_stack[1].line)
        end
        assert.truthy(infos[0]:find("stack traceback:", 1, true))
        assert.are.equal(infos[0], infos[1])
        assert.are.equal(infos[0], infos[2])
    end)

    it("run an error handler, sub-steps and coroutine steps between chained ones", function()
        local log = {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:success(1) end)
        root:add(function(asi, v) error("x" .. v) end, function(asi, code)
            log[#log + 1] = "eh " .. code
            asi:success(10)
        end)
        root:add(function(asi, v) asi:add(function(a2) a2:success(v + 1) end) end)
        root:add(fa.async(function(asi, v) return v + 1 end))
        root:add(function(asi, v) asi:success(v + 1) end)
        root:add(function(asi, v) log[#log + 1] = v end)
        root:run()
        assert.are.same({ "eh InternalError", 13 }, log)
    end)

    it("finish the handle of a chained step", function()
        local kept, log = {}, {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) kept[1] = asi; asi:success(1) end)
        root:add(function(asi) kept[2] = asi end)
        root:add(function(asi)
            for i = 1, 2 do
                local ok, e = pcall(kept[i].success, kept[i], 2)
                log[#log + 1] = kept[i]:status() .. " " .. tostring(ok) .. " " .. e:match("success%(%): .*")
            end
            local ok, e = pcall(kept[1].add, kept[1], function() end)
            log[#log + 1] = tostring(ok) .. " " .. e:match("add%(%): .*")
        end)
        root:run()
        assert.are.same({
            "finished false success(): the step was already completed",
            "finished false success(): the step has finished; its handle may not be used any more",
            "false add(): the step has finished; its handle may not be used any more",
        }, log)
    end)

    it("let other flows run during a long run of Lua steps", function()
        local order = {}
        local long, short = fa.AsyncSteps(tool), fa.AsyncSteps(tool)
        local N = 5000
        for i = 1, N do
            long:add(function(asi, v)
                if i == N then order[#order + 1] = "long done" end
                asi:success((v or 0) + 1)
            end)
        end
        short:add(function(asi) order[#order + 1] = "short" end)
        long:execute()
        short:execute()
        tool:run()
        assert.are.same({ "short", "long done" }, order)
        assert.are.same({ true, N }, { long:result() })
    end)

    it("call each step's own function when runs mix a shared one with others", function()
        -- a run of steps pushes the context's shared step function from a
        -- slot of its own (lua_trampoline.c); steps of other functions,
        -- and a shared function that changes between flows, must still
        -- call the function each step was added with
        local log = {}
        local function f(asi, v) v = v or 0; log[#log + 1] = "f" .. v; asi:success(v + 1) end
        local function g(asi, v) v = v or 0; log[#log + 1] = "g" .. v; asi:success(v + 10) end
        local other = fa.AsyncSteps(tool)
        local root = fa.AsyncSteps(tool)
        root:add(f) -- f becomes the shared function
        root:add(g)
        root:add(f)
        root:add(function(asi, v)
            other:add(g) -- a root not running may be added to
            other:add(f)
            other:add(g)
            asi:success(v)
        end)
        root:add(f)
        root:add(g)
        assert.are.equal(23, root:run())
        other:add(function(asi, v) log[#log + 1] = "end " .. tostring(v) end)
        assert.is_nil(other:run())
        -- f is anchored by no step any more: g becomes the shared one
        local third = fa.AsyncSteps(tool)
        third:add(g)
        third:add(g)
        third:add(f)
        assert.are.equal(21, third:run())
        assert.are.same({ "f0", "g1", "f11", "f12", "g13",
                          "g0", "f10", "g11", "end 21",
                          "g0", "g10", "f20" }, log)
    end)

    it("leave nothing anchored", function()
        local refs0, recs0 = H.settle()
        do
            local root = fa.AsyncSteps(tool)
            local f = function(asi, v) asi:success((v or 0) + 1) end
            for _ = 1, 100 do root:add(f) end
            for i = 1, 10 do root:add(function(asi, v) asi:success(v + i) end) end
            assert.are.equal(155, root:run())
        end
        local refs, recs = H.settle()
        assert.are.equal(refs0, refs)
        assert.are.equal(recs0, recs)
    end)
end)
