-- The load policy (issue 23: "loading is code execution"): what the flows
-- of a Tool, or of the whole process, may add by name.
-- fa.Tool{ allow = {...} }, tool:set_load_policy{...} and
-- fa.set_load_policy{...} over futoin_host_policy_set(); the rules
-- themselves are the core's (tests/test_policy.c). Steps of other
-- languages adding Lua steps under a policy: tests/polyglot/host_spec.lua.
local H = require "helper"
local fa = H.fa

local HYPOT = { "c", "libm.so.6", "double hypot(double, double)" }

-- Lua modules for steps by name, in a folder of their own on package.path:
-- pol_app (top), pol_app.steps (double), pol_other (double).
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p '" .. dir .. "/pol_app'"))
local function write(name, text)
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write(text)
    f:close()
end
write("pol_app.lua", "return { top = function(asi, v) asi:success(v) end }\n")
write("pol_app/steps.lua", "return { double = function(asi, v) asi:success(v * 2) end }\n")
write("pol_other.lua", "return { double = function(asi, v) asi:success(v * 2) end }\n")
package.path = dir .. "/?.lua;" .. package.path

-- A root of `tool`: a step giving `first...`, then the named step; what run()
-- returns.
local function run_one(tool, named, ...)
    local first = table.pack(...)
    local root = fa.AsyncSteps(tool)
    root:add(function(asi) asi:success(table.unpack(first, 1, first.n)) end)
    root:add_foreign(named[1], named[2], named[3])
    return root:run()
end

-- The named step's error: InvalidRequest; its info.
local function refused(tool, named)
    local root = fa.AsyncSteps(tool)
    root:add(function(asi) asi:success(2) end)
    root:add_foreign(named[1], named[2], named[3])
    root:add(function() error("a step after the refused one ran") end)
    local ok, e = pcall(root.run, root)
    assert.is_false(ok)
    assert.is_true(fa.is_error(e), tostring(e))
    assert.are.equal("InvalidRequest", e.code)
    return e.info
end

describe("load policy", function()
    local tools = {}
    local function Tool(opts)
        local t = fa.Tool(opts)
        tools[#tools + 1] = t
        return t
    end
    after_each(function()
        for _, t in ipairs(tools) do t:close() end
        tools = {}
    end)

    it("allows everything without one", function()
        local tool = Tool()
        assert.are.equal(42, run_one(tool, { "lua", "pol_other", "double" }, 21))
        assert.are.equal(5.0, run_one(tool, HYPOT, 3.0, 4.0))
    end)

    it("runs the languages and modules it allows", function()
        local tool = Tool{ allow = {
            languages = { "lua", "c" },
            modules = { "lua:pol_app.*", "lua:pol_app", "c:libm.so.6" } } }
        assert.are.equal(42, run_one(tool, { "lua", "pol_app.steps", "double" }, 21))
        assert.are.equal(21, run_one(tool, { "lua", "pol_app", "top" }, 21))
        assert.are.equal(5.0, run_one(tool, HYPOT, 3.0, 4.0))
    end)

    it("refuses a language it does not list, naming the rule, before looking for it", function()
        local tool = Tool{ allow = { languages = { "lua" } } }
        assert.are.equal("load policy of this tool: language 'c' is not allowed (languages: lua)",
            refused(tool, HYPOT))
        assert.are.equal("load policy of this tool: language 'cobol' is not allowed (languages: lua)",
            refused(tool, { "cobol", "payroll", "run" }))
        assert.are.equal(42, run_one(tool, { "lua", "pol_other", "double" }, 21))
        local none = Tool{ allow = { languages = {} } }
        assert.are.equal("load policy of this tool: language 'lua' is not allowed (languages: none)",
            refused(none, { "lua", "pol_other", "double" }))
    end)

    it("refuses a module outside its prefix rule", function()
        local tool = Tool{ allow = { modules = { "lua:pol_app.*", "c:libm.so.6" } } }
        local rules = "(no rule matches it; rules for lua: lua:pol_app.*)"
        assert.are.equal("load policy of this tool: lua module 'pol_app' is not allowed " .. rules,
            refused(tool, { "lua", "pol_app", "top" }))
        assert.are.equal("load policy of this tool: lua module 'pol_other' is not allowed " .. rules,
            refused(tool, { "lua", "pol_other", "double" }))
        assert.are.equal("load policy of this tool: lua module 'os' is not allowed " .. rules,
            refused(tool, { "lua", "os", "execute" }))
        assert.are.equal("load policy of this tool: c module 'libc.so.6' is not allowed "
            .. "(no rule matches it; rules for c: c:libm.so.6)",
            refused(tool, { "c", "libc.so.6", "int abs(int)" }))
        assert.are.equal(42, run_one(tool, { "lua", "pol_app.steps", "double" }, 21))
        local c_only = Tool{ allow = { modules = { "c:libm.so.6" } } }
        assert.are.equal("load policy of this tool: lua module 'pol_other' is not allowed "
            .. "(no rule names lua modules)", refused(c_only, { "lua", "pol_other", "double" }))
    end)

    it("refuses '..' under a folder's rule", function()
        local so = package.searchpath("futoin_async.core", package.cpath)
        local folder = so:match("^(.*)/[^/]+$")
        local tool = Tool{ allow = { modules = { "c:" .. folder .. "/*" } } }
        local version = { "c", folder .. "/libfutoin_async.so.0", "int futoin_async_version_number(void)" }
        assert.are.equal(fa.core.futoin_async_version_number(), run_one(tool, version))
        -- the same file, reached through "..": refused, not loaded
        local climbing = folder .. "/../futoin_async/libfutoin_async.so.0"
        assert.are.equal(("load policy of this tool: c module '%s' is not allowed (no rule "
            .. "matches it; rules for c: c:%s/*)"):format(climbing, folder),
            refused(tool, { "c", climbing, "int futoin_async_version_number(void)" }))
    end)

    it("is set once per tool: a second policy is refused and changes nothing", function()
        local tool = Tool{ allow = { languages = { "lua" } } }
        local e = H.raises(tool.set_load_policy, tool, {})
        assert.truthy(tostring(e):find("tool:set_load_policy(): this Tool has a load policy "
            .. "already; it is set once, so that code running in a flow cannot widen it", 1, true),
            tostring(e))
        H.raises(tool.set_load_policy, tool, { languages = { "lua", "c" } })
        assert.truthy(refused(tool, HYPOT):find("language 'c' is not allowed", 1, true))
        -- a tool made without one takes one, once
        local later = Tool()
        assert.are.equal(5.0, run_one(later, HYPOT, 3.0, 4.0))
        later:set_load_policy{ modules = { "lua:pol_other" } }
        assert.are.equal("load policy of this tool: c module 'libm.so.6' is not allowed "
            .. "(no rule names c modules)", refused(later, HYPOT))
        assert.are.equal(42, run_one(later, { "lua", "pol_other", "double" }, 21))
        H.raises(later.set_load_policy, later, { modules = { "lua:pol_other" } })
        -- per tool: another tool is not held to it
        assert.are.equal(5.0, run_one(Tool(), HYPOT, 3.0, 4.0))
    end)

    it("is refused on a borrowed Tool: the program hosting the flow sets its own", function()
        -- tests/threads_lua.c: a C loop thread of its own runs Lua steps by name
        local threads = require "threads_lua"
        write("pol_borrowed.lua", [[
return { try = function(asi)
    local t = asi:tool()
    local ok, e = pcall(t.set_load_policy, t, { languages = {} })
    asi:success(tostring(ok), tostring(e))
end }
]])
        local results = threads.run(dir .. "/pol_borrowed.lua", { { "try" } })
        assert.are.equal(true, results[1].ok)
        assert.are.equal("false", results[1][1])
        assert.truthy(results[1][2]:find("set_load_policy(): this Tool is the loop of the program "
            .. "that hosts this Lua state; that program sets its load policy", 1, true), results[1][2])
    end)

    it("is refused on a closed tool", function()
        local tool = fa.Tool()
        tool:close()
        local e = H.raises(tool.set_load_policy, tool, { languages = { "c" } })
        assert.truthy(tostring(e):find("set_load_policy(): the Tool is closed", 1, true), tostring(e))
    end)

    local BAD = {
        { "a string", "python", "the policy must be a table { languages = {...}, modules = {...} }, got string" },
        { "an unknown key", { langs = { "c" } }, "unknown key 'langs' (languages, modules)" },
        { "a string list", { languages = "lua" }, "languages must be a list of strings (a sequence table), got string" },
        { "a map", { modules = { c = "libm.so.6" } }, "modules must be a list of strings (a sequence table), has the key 'c'" },
        { "a hole", { languages = { "lua", nil, "c" } }, "languages must be a list of strings (a sequence table), has" },
        { "a number", { languages = { "lua", 3 } }, "languages[2] must be a string, got number" },
        { "a table entry", { modules = { {} } }, "modules[1] must be a string, got table" },
        { "a NUL in a language", { languages = { "lu\0a" } }, "languages[1] must not contain an embedded NUL" },
        { "a NUL in a rule", { modules = { "lua:os\0x" } }, "modules[1] must not contain an embedded NUL" },
        { "a bad language", { languages = { "no/such" } }, "languages[1]: 'no/such' is not a language name" },
        { "an empty language", { languages = { "" } }, "languages[1]: '' is not a language name" },
        { "a rule without a language", { modules = { "libm.so.6" } }, "modules[1]: 'libm.so.6' is not a rule 'language:module'" },
        { "an empty rule language", { modules = { ":libm.so.6" } }, "is not a rule 'language:module'" },
        { "a rule without a module", { modules = { "c:" } }, "modules[1]: 'c:' names no module" },
        { "a bad rule language", { modules = { "py thon:x" } }, "'py thon:x': 'py thon' is not a language name" },
        { "a '*' inside", { modules = { "java:org.*.Totals" } }, "modules[1]: 'java:org.*.Totals': '*' is only allowed last" },
        { "a '*' first", { modules = { "java:*x" } }, "'*' is only allowed last" },
    }
    for _, case in ipairs(BAD) do
        local what, policy, says = case[1], case[2], case[3]
        it("refuses bad input at the call site, setting nothing: " .. what, function()
            local function check(e, prefix)
                local text = tostring(e)
                assert.truthy(text:find("^[^:]*policy_spec%.lua:%d+: " .. prefix:gsub("%p", "%%%0")),
                    "not the caller's line or not " .. prefix .. ": " .. text)
                assert.truthy(text:find(says, 1, true), text)
            end
            check(H.raises(function() local t = fa.Tool{ allow = policy }; return t end), "Tool{ allow }: ")
            local tool = Tool()
            check(H.raises(function() tool:set_load_policy(policy) end), "tool:set_load_policy(): ")
            tool:set_load_policy{ languages = { "c" } } -- nothing was set before
            assert.truthy(refused(tool, { "lua", "pol_other", "double" })
                :find("language 'lua' is not allowed", 1, true))
        end)
    end

    it("of the process applies to every tool and is set once (a process of its own)", function()
        local out = H.run_lua([[
package.path = arg[1] .. "/?.lua;" .. package.path
local fa = require "futoin_async"
local function outcome(tool, named, ...)
    local first = table.pack(...)
    local root = fa.AsyncSteps(tool)
    root:add(function(asi) asi:success(table.unpack(first, 1, first.n)) end)
    root:add_foreign(named[1], named[2], named[3])
    local ok, r = pcall(root.run, root)
    if ok then return tostring(r) end
    return fa.is_error(r) and (r.code .. ": " .. tostring(r.info)) or tostring(r)
end
local hypot = { "c", "libm.so.6", "double hypot(double, double)" }
for _, bad in ipairs({ { languages = "c" }, { modules = { "c:*x" } } }) do
    local ok, e = pcall(fa.set_load_policy, bad)
    print(ok, e)
end
print(outcome(fa.Tool(), hypot, 3.0, 4.0)) -- nothing was set
fa.set_load_policy{ languages = { "lua", "c" }, modules = { "c:libm.so.6", "lua:*" } }
print(pcall(fa.set_load_policy, {}))
print(outcome(fa.Tool(), hypot, 3.0, 4.0))
print(outcome(fa.Tool(), { "lua", "pol_other", "double" }, 21))
print(outcome(fa.Tool(), { "c", "libc.so.6", "int abs(int)" }, -3))
print(outcome(fa.Tool(), { "python", "pricing", "apply" }, 1))
print(outcome(fa.Tool{ allow = { languages = { "lua" } } }, hypot, 3.0, 4.0))
]], dir)
        local lines = {}
        for line in out:gmatch("[^\n]+") do
            lines[#lines + 1] = (line:gsub("^(%a+)\t[^:]*:%d+: ", "%1\t"))
        end
        assert.are.same({
            "false\tset_load_policy(): languages must be a list of strings (a sequence table), got string",
            "false\tset_load_policy(): modules[1]: 'c:*x': '*' is only allowed last (a prefix rule, "
                .. "e.g. 'java:org.example.*')",
            "5.0",
            "false\tset_load_policy(): this process has a load policy already; it is set once, "
                .. "so that code running in a flow cannot widen it",
            "5.0",
            "42",
            "InvalidRequest: load policy of this process: c module 'libc.so.6' is not allowed "
                .. "(no rule matches it; rules for c: c:libm.so.6)",
            "InvalidRequest: load policy of this process: language 'python' is not allowed "
                .. "(languages: lua, c)",
            "InvalidRequest: load policy of this tool: language 'c' is not allowed (languages: lua)",
        }, lines)
    end)
end)
