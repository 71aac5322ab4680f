-- The polyglot matrix with Lua as the host program (tests/polyglot/README.md):
-- flows whose own steps are Lua, with steps of another language F (its
-- "polyglot_fragments", added by name with asi:add_foreign) in between.
-- Per F: values both ways, an error of F caught in Lua and an error of Lua
-- caught in F, cancel, timeout, shared state, the async stack; then 10,000
-- mixed flows after which the binding holds nothing more than before.
--
-- Run by bindings/lua/polyglot.sh test (the environment of
-- tests/polyglot/run.sh). FUTOIN_POLYGLOT_LANGS picks the languages F
-- (default "c python java lua"; "lua" is Lua itself by name, through the
-- host this process registered).
local fa = require "futoin_async"
local assert = require "luassert"

local LANGS = {}
for l in (os.getenv("FUTOIN_POLYGLOT_LANGS") or "c python java lua"):gmatch("[^%s,]+") do
    LANGS[#LANGS + 1] = l
end
local CFRAG = os.getenv("FUTOIN_POLYGLOT_C_FRAGMENTS")
local FLOWS = tonumber(os.getenv("FUTOIN_POLYGLOT_FLOWS") or "") or 10000
local THIS_FILE = debug.getinfo(1, "S").source:sub(2)

local function module_of(lang)
    if lang == "java" then
        return "org.futoin.polyglot.Fragments"
    elseif lang == "c" then
        return assert(CFRAG, "FUTOIN_POLYGLOT_C_FRAGMENTS is not set")
    end
    return "polyglot_fragments"
end

local tool = fa.Tool()

-- Live entries of the registry: luaL_unref() leaves a freed slot holding an
-- integer (the next free slot), and a callback record of the binding keeps
-- its slots for reuse, holding false while it anchors nothing (their number
-- follows the record pool, reported by fa.refs()), so neither is counted.
local function registry_size()
    local n = 0
    for _, v in pairs(debug.getregistry()) do
        if math.type(v) ~= "integer" and v ~= false then n = n + 1 end
    end
    return n
end

local function settle()
    collectgarbage()
    collectgarbage()
    local refs, recs = fa.refs()
    return refs, recs, registry_size()
end

-- run a root; returns ok, values... or false, error
local function run(root)
    return pcall(root.run, root)
end

describe("the Lua host", function()
    it("registered the language host 'lua' (steps of Lua by name)", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:success(6, 7) end)
        local _, resolved = root:add_foreign("lua", "polyglot_fragments", "describe")
        assert.is_true(resolved)
        assert.are.equal("int:6,int:7", root:run())
    end)

    it("says clearly what cannot be had, in the flow as InvalidRequest", function()
        local cases = {
            { "cobol", "payroll", "run", "no host for language 'cobol'" },
            { "lua", "no_such_module_xyz", "f",
              "lua: cannot load module 'no_such_module_xyz' (for function 'f'): module 'no_such_module_xyz' not found" },
            { "lua", "polyglot_fragments", "nosuch", "lua: module 'polyglot_fragments' has no function 'nosuch'" },
            { "c", "/nonexistent/libx.so", "f", "c: cannot load module '/nonexistent/libx.so'" },
        }
        for _, c in ipairs(cases) do
            local root = fa.AsyncSteps(tool)
            local ran = false
            local _, resolved = root:add_foreign(c[1], c[2], c[3])
            assert.is_false(resolved)
            root:add(function() ran = true end)
            local ok, e = run(root)
            assert.is_false(ok)
            assert.are.equal("InvalidRequest", e.code)
            assert.truthy(e.info:find(c[4], 1, true), e.info)
            assert.is_false(ran)
        end
        local root = fa.AsyncSteps(tool)
        local e = select(2, pcall(root.add_foreign, root, "lua", {}, "f"))
        assert.truthy(tostring(e):find("module must be a string, got table", 1, true), tostring(e))
    end)

    it("records where its steps come from (function's file:line)", function()
        local root = fa.AsyncSteps(tool)
        local line = debug.getinfo(1, "l").currentline + 1
        root:add(function(asi) asi:error("Mine", "here") end)
        local ok, e = run(root)
        assert.is_false(ok)
        assert.are.equal("lua", e.async_stack[1].language)
        assert.are.equal(THIS_FILE, e.async_stack[1].file)
        assert.are.equal(line, e.async_stack[1].line)
        assert.truthy(e:async_traceback():find("[lua] " .. THIS_FILE .. ":" .. line
            .. ": in function <" .. THIS_FILE .. ":" .. line .. ">", 1, true), e:async_traceback())
    end)

    it("keeps tables in state() language-local and lists shared names in pairs()", function()
        local root = fa.AsyncSteps(tool)
        local seen = {}
        root:add(function(asi)
            local st = asi:state()
            st.list = { 1, 2 }
            table.insert(st.list, 3) -- a table stays a table: same identity
            st.n = 5
            st.s = "x"
            asi:shared_set("arr", { 4, 5 })
        end)
        root:add(function(asi)
            local st = asi:state()
            assert.are.same({ 1, 2, 3 }, st.list)
            assert.is_nil(rawget(st, "n")) -- shared: not in the table itself
            assert.are.equal(5, st.n)
            assert.are.same({ 4, 5 }, asi:shared_get("arr"))
            for k, v in pairs(st) do seen[k] = v end
            st.n = nil
            assert.is_nil(st.n)
            assert.is_nil(asi:shared_get("n"))
        end)
        root:run()
        assert.are.same({ list = { 1, 2, 3 }, n = 5, s = "x" }, seen)
        local e = select(2, pcall(root.shared_set, root, "f", print))
        assert.truthy(tostring(e):find("cannot be shared", 1, true), tostring(e))
    end)
end)

for _, F in ipairs(LANGS) do
    local MOD = module_of(F)

    describe("Lua host x " .. F, function()
        it("values: echo round trip and what " .. F .. " saw", function()
            local root = fa.AsyncSteps(tool)
            root:add(function(asi) asi:success(42, 2.5, true, "héllo") end)
            assert.is_true(select(2, root:add_foreign(F, MOD, "echo")))
            local ok, i, d, b, s = run(root)
            assert(ok, i)
            assert.are.equal("integer", math.type(i)); assert.are.equal(42, i)
            assert.are.equal("float", math.type(d)); assert.are.equal(2.5, d)
            assert.are.equal(true, b)
            assert.are.equal("héllo", s)

            root = fa.AsyncSteps(tool)
            root:add(function(asi) asi:success(fa.bytes("\0\1\255"), { 1, 2, 3 }, { 0.5, 1.5 }) end)
            root:add_foreign(F, MOD, "echo")
            local by, ints, floats
            ok, by, ints, floats = run(root)
            assert(ok, by)
            assert.is_true(fa.is_bytes(by), type(by))
            assert.are.equal(fa.bytes("\0\1\255"), by)
            assert.are.same({ 1, 2, 3 }, ints)
            assert.are.equal("integer", math.type(ints[1]))
            assert.are.same({ 0.5, 1.5 }, floats)

            root = fa.AsyncSteps(tool)
            root:add(function(asi) asi:success(42, 2.5, true, "héllo") end)
            root:add_foreign(F, MOD, "describe")
            assert.are.same({ true, "int:42,float:2.5,bool:true,str:héllo" }, { run(root) })

            root = fa.AsyncSteps(tool)
            root:add(function(asi) asi:success(fa.bytes("\0\1\255"), { 1, 2, 3 }, { 0.5, 1.5 }) end)
            root:add_foreign(F, MOD, "describe")
            assert.are.same({ true, "bytes:0001ff,ints:1|2|3,floats:0.5|1.5" }, { run(root) })

            root = fa.AsyncSteps(tool)
            root:add_foreign(F, MOD, "describe")
            assert.are.same({ true, "none" }, { run(root) })
        end)

        it("errors: " .. F .. ".fail caught in Lua, a Lua error caught in " .. F, function()
            local root = fa.AsyncSteps(tool)
            local code, info, last
            root:add(function(asi)
                asi:add_foreign(F, MOD, "fail")
            end, function(asi, c)
                code, info, last = c, asi:state().error_info, asi:state().last_exception
                asi:success("recovered")
            end)
            assert.are.same({ true, "recovered" }, { run(root) })
            assert.are.equal("FragmentError", code)
            assert.are.equal(F, info)

            -- F.catch("lua", "polyglot_fragments", "fail"): Lua's error, F's handler
            root = fa.AsyncSteps(tool)
            root:add(function(asi) asi:success("lua", "polyglot_fragments", "fail") end)
            root:add_foreign(F, MOD, "catch")
            assert.are.same({ true, "caught FragmentError in " .. F }, { run(root) })

            -- an error no handler takes: root:run() raises it
            root = fa.AsyncSteps(tool)
            root:add_foreign(F, MOD, "fail")
            local ok, e = run(root)
            assert.is_false(ok)
            assert.is_true(fa.is_error(e, "FragmentError"))
            assert.are.equal(F, e.info)
        end)

        if F ~= "lua" then
            it("the load policy: what " .. F .. " adds by name in a Lua flow is held to its Tool's", function()
                -- F.catch adds the named Lua step under F's own error handler
                local strict = fa.Tool{ allow = { languages = { "lua", F },
                    modules = { F .. ":" .. MOD, "lua:polyglot_fragments" } } }
                local root = fa.AsyncSteps(strict)
                root:add(function(asi) asi:success("lua", "os", "execute") end)
                root:add_foreign(F, MOD, "catch")
                assert.are.same({ true, "caught InvalidRequest in " .. F }, { run(root) })
                assert.are.equal("load policy of this tool: lua module 'os' is not allowed (no rule "
                    .. "matches it; rules for lua: lua:polyglot_fragments)", root:state().error_info)
                root:free()
                -- what it allows runs from F's step as well
                root = fa.AsyncSteps(strict)
                root:state().key = 42
                root:add(function(asi) asi:success("lua", "polyglot_fragments", "read_state") end)
                root:add_foreign(F, MOD, "catch")
                assert.are.same({ true, 42 }, { run(root) })
                root:free()
                strict:close()
            end)
        end

        it("the async stack: " .. F .. "'s frame first, then Lua's", function()
            local root = fa.AsyncSteps(tool)
            local frames, text, via_state
            local line = debug.getinfo(1, "l").currentline + 1
            root:add(function(asi)
                asi:add_foreign(F, MOD, "fail")
            end, function(asi)
                frames = asi:async_stack()
                via_state = asi:state().async_stack
                text = asi:async_traceback("FragmentError")
                asi:success()
            end)
            assert(run(root))
            assert.is_table(frames)
            assert.are.equal(F, frames[1].language)
            assert.truthy(frames[1]["function"] and frames[1]["function"]:find("fail"),
                tostring(frames[1]["function"]))
            local lua_at
            for i = 2, #frames do
                if frames[i].language == "lua" then lua_at = i break end
            end
            assert(lua_at, text)
            assert.are.equal(THIS_FILE, frames[lua_at].file)
            assert.are.equal(line, frames[lua_at].line)
            assert.are.same(frames, via_state)
            -- the Lua rendering shows both languages, innermost first
            assert.truthy(text:find("^FragmentError\nasync stack traceback:\n\t%[" .. F .. "%] "), text)
            assert.truthy(text:find("\n\t[lua] " .. THIS_FILE .. ":" .. line .. ":", 1, true), text)

            -- and on the error root:run() raises
            root = fa.AsyncSteps(tool)
            root:add(function(asi) asi:add_foreign(F, MOD, "fail") end)
            local ok, e = run(root)
            assert.is_false(ok)
            assert.are.equal(F, e.async_stack[1].language)
            assert.truthy(e:async_traceback():find("[lua] " .. THIS_FILE, 1, true), e:async_traceback())
        end)

        it("the async stack through add_foreign(..., onerror) names the call", function()
            local root = fa.AsyncSteps(tool)
            local frames, text
            local line
            root:add(function(asi)
                line = debug.getinfo(1, "l").currentline + 1
                asi:add_foreign(F, MOD, "fail", function(a)
                    frames = a:async_stack()
                    text = a:async_traceback("FragmentError")
                    a:success()
                end)
            end)
            assert(run(root))
            assert.is_table(frames)
            assert.are.equal(F, frames[1].language)
            -- the binding's guard step (the level onerror sits on) is shown as
            -- the add_foreign() call at its line, not as a file of the Lua
            -- layer (futoin_async.lua or one of its parts, futoin_async/*.lua)
            assert.are.equal("lua", frames[2].language, text)
            assert.are.equal(("add_foreign(%s, %s, fail)"):format(F, MOD), frames[2]["function"])
            assert.are.equal(THIS_FILE, frames[2].file)
            assert.are.equal(line, frames[2].line)
            assert.falsy(text:find("futoin_async.lua", 1, true), text)
            assert.falsy(text:find("futoin_async/[%w_]+%.lua"), text)
        end)

        it("cancel: the root cancelled while " .. F .. ".wait waits", function()
            local root = fa.AsyncSteps(tool)
            local after = false
            root:add_foreign(F, MOD, "wait")
            root:add(function() after = true end)
            root:execute()
            tool:deferred(20, function() root:cancel() end)
            tool:run()
            assert.is_false(after)
            assert.are.equal(true, root:state()["cancelled_" .. F])
        end)

        it("timeout: a Lua step with a timeout around " .. F .. ".wait", function()
            local root = fa.AsyncSteps(tool)
            local code, flag
            root:add(function(asi)
                asi:set_timeout(30)
                asi:add_foreign(F, MOD, "wait")
            end, function(asi, c)
                code = c
                flag = asi:state()["cancelled_" .. F]
                asi:success()
            end)
            assert(run(root))
            assert.are.equal("Timeout", code)
            assert.are.equal(true, flag)
        end)

        it("state: Lua sets key, " .. F .. " reads it; " .. F .. " sets from_" .. F .. ", Lua reads it", function()
            local root = fa.AsyncSteps(tool)
            local read, from
            root:add(function(asi) asi:state().key = 42 end)
            root:add_foreign(F, MOD, "read_state")
            root:add(function(_, v) read = v end)
            root:add_foreign(F, MOD, "write_state")
            root:add(function(asi) from = asi:state()["from_" .. F] end)
            assert(run(root))
            assert.are.equal(42, read)
            assert.are.equal("integer", math.type(read))
            assert.are.equal(F, from)
            assert.are.equal(F, root:state()["from_" .. F]) -- and from outside the flow
        end)

        it(FLOWS .. " mixed flows leave nothing behind", function()
            local refs0, recs0, reg0 = settle()
            local counts = { ok = 0, err = 0, cancel = 0 }
            for i = 1, FLOWS do
                local root = fa.AsyncSteps(tool)
                local kind = i % 3
                if kind == 0 then
                    root:add(function(asi) asi:state().key = i; asi:success(i, "s", { 1, 2 }) end)
                    root:add_foreign(F, MOD, "echo")
                    root:add(function(_, v) if v == i then counts.ok = counts.ok + 1 end end)
                    root:execute()
                elseif kind == 1 then
                    root:add(function(asi)
                        asi:add_foreign(F, MOD, "fail")
                    end, function(asi, c)
                        if c == "FragmentError" then counts.err = counts.err + 1 end
                    end)
                    root:execute(function() end)
                else
                    root:add(function(asi) asi:add_foreign(F, MOD, "wait") end)
                    root:execute()
                    tool:immediate(function()
                        root:cancel()
                        counts.cancel = counts.cancel + 1
                    end)
                end
                if i % 100 == 0 then
                    tool:run()
                end
            end
            tool:run()
            local refs, recs, reg = settle()
            print(("  Lua host x %s: %d flows (%d ok, %d error, %d cancel); refs %d -> %d, "
                .. "records %d -> %d, registry entries %d -> %d"):format(F, FLOWS, counts.ok,
                counts.err, counts.cancel, refs0, refs, recs0, recs, reg0, reg))
            assert.are.equal(FLOWS // 3, counts.ok)
            assert.are.equal(FLOWS // 3 + (FLOWS % 3 >= 1 and 1 or 0), counts.err)
            assert.are.equal(refs0, refs)
            assert.are.equal(recs0, recs)
            assert.are.equal(reg0, reg)
        end)
    end)
end
