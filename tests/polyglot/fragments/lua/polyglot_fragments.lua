--- The polyglot fragments in Lua (module "polyglot_fragments" of every
-- language, see tests/polyglot/README.md): step functions that any host
-- adds by name, e.g. futoin_host_add(as, "lua", "polyglot_fragments",
-- "echo") in C or asi.add_foreign("lua", "polyglot_fragments", "echo") in
-- Python. A step function gets (asi, ...values), as any Lua step does.
local fa = require "futoin_async"

local LANG = "lua"
local M = {}

--- echo: success() with exactly the values received.
function M.echo(asi, ...)
    asi:success(...)
end

-- Floats in their shortest round-trip form (0.5, 2.5; 2.0 for an integral
-- float, as Python and Java print it).
local function float_text(x)
    if x ~= x then
        return "nan"
    elseif x == math.huge then
        return "inf"
    elseif x == -math.huge then
        return "-inf"
    end
    local s
    for digits = 1, 17 do
        s = ("%." .. digits .. "g"):format(x)
        if tonumber(s) == x then
            break
        end
    end
    if not s:find("[%.eEn]") then
        s = s .. ".0"
    end
    return s
end

local function describe_one(v)
    local t = type(v)
    if math.type(v) == "integer" then
        return "int:" .. v
    elseif t == "number" then
        return "float:" .. float_text(v)
    elseif t == "boolean" then
        return "bool:" .. tostring(v)
    elseif t == "string" then
        return "str:" .. v
    elseif fa.is_bytes(v) then
        return "bytes:" .. v:hex()
    elseif t == "table" and getmetatable(v) == nil and #v > 0 then
        local all_int, parts = true, {}
        for i = 1, #v do
            if math.type(v[i]) ~= "integer" then
                all_int = false
            end
        end
        for i = 1, #v do
            parts[i] = all_int and tostring(v[i]) or float_text(v[i])
        end
        return (all_int and "ints:" or "floats:") .. table.concat(parts, "|")
    elseif v == nil then
        return "nil"
    end
    return "object:" .. t
end

--- describe: one string describing the values received.
function M.describe(asi, ...)
    local n = select("#", ...)
    if n == 0 then
        return asi:success("none")
    end
    local parts = {}
    for i = 1, n do
        parts[i] = describe_one((select(i, ...)))
    end
    asi:success(table.concat(parts, ","))
end

--- fail: FragmentError, error_info "lua".
function M.fail(asi)
    asi:error("FragmentError", LANG)
end

--- wait: a cancel handler that sets the shared state "cancelled_lua", then
-- wait (never completes by itself).
function M.wait(asi)
    asi:set_cancel(function(a)
        a:state().cancelled_lua = true
    end)
    asi:wait_external()
end

--- read_state: success(shared state "key").
function M.read_state(asi)
    asi:success(asi:state().key)
end

--- write_state: shared state "from_lua" = "lua".
function M.write_state(asi)
    asi:state().from_lua = LANG
    asi:success()
end

--- catch(language, module, function): that step, under an error handler
-- written in Lua.
function M.catch(asi, language, module, fn)
    asi:add_foreign(language, module, fn, function(a, code)
        a:success("caught " .. code .. " in " .. LANG)
    end)
end

--- trace_nest: the C host's trace chain C -> Python -> Lua -> Java:
-- records the trace context it sees in shared state "trace_lua" ("<trace
-- id> <span id> <parent span id>", or "none"), then adds Java's trace_nest
-- under itself.
function M.trace_nest(asi)
    local t = asi:trace()
    asi:state()["trace_" .. LANG] = t
        and (t.trace_id .. " " .. t.span_id .. " " .. tostring(t.parent_span_id))
        or "none"
    asi:add_foreign("java", "org.futoin.polyglot.Fragments", "trace_nest")
end

return M
