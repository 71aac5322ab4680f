--- futoin_async, part "sync": the sync objects of FTN12 §1.11, fa.Mutex(),
-- fa.Throttle(), fa.Limiter{} (asi:sync(obj, step) adds a step inside
-- one), fa.UNLIMITED.
--
-- A part of the module futoin_async, run by lib/futoin_async.lua while
-- loading (see there). Uses I.sync_objects (the objects made here, which
-- asi:sync() accepts).

local type, pcall, error, setmetatable, getmetatable, tostring =
    type, pcall, error, setmetatable, getmetatable, tostring

return function(M, core, I)
    local sync_objects = I.sync_objects

    local SyncObject = {}
    SyncObject.__index = SyncObject

    local function sync_gc(o)
        local p = rawget(o, "_ptr")
        if p then
            o._free(p)
            o._ptr = nil
        end
    end

    --- obj:close(): free the object (refused while a flow is inside or queued).
    function SyncObject:close()
        local p = rawget(self, "_ptr")
        if p then
            if self._free(p) ~= 0 then
                error(self.kind .. ":close(): a flow is inside or queued", 2)
            end
            self._ptr = nil
        end
    end

    local function sync_object(kind, ptr, free, tool)
        if ptr == 0 then
            error(kind .. "(): invalid parameters", 3)
        end
        local o = setmetatable({ kind = kind, _ptr = ptr, _free = free, _tool = tool }, {
            __index = SyncObject,
            __gc = sync_gc,
            __name = "futoin_async." .. kind,
            __tostring = function(o)
                return "futoin_async." .. kind .. (rawget(o, "_ptr") and "" or " (closed)")
            end,
        })
        sync_objects[o] = true
        return o
    end

    local UINT32_MAX = 0xFFFFFFFF

    local function count_arg(v, name, default, min, max)
        if v == nil then
            return default
        end
        if math.type(v) ~= "integer" or v < min or (max and v > max) then
            error(name .. " must be an integer >= " .. min
                .. (max and (" and <= " .. max) or "") .. ", got " .. tostring(v), 3)
        end
        return v
    end

    local function tool_arg(tool, what)
        if tool == nil then
            return M.default_tool()
        end
        if getmetatable(tool) ~= core.metatable("tool") then
            error(what .. ": tool must be a Tool, got " .. type(tool), 3)
        end
        return tool
    end

    local function queue_arg(v, name)
        if v == nil then
            return core.futoin_bind_unlimited()
        end
        return count_arg(v, name, 0, 0)
    end

    --- Mutex([max [, max_queue]]): at most `max` flows (default 1) inside.
    function M.Mutex(max, max_queue)
        max = count_arg(max, "Mutex(max, max_queue): max", 1, 1)
        local q = queue_arg(max_queue, "Mutex(max, max_queue): max_queue")
        return sync_object("Mutex", core.futoin_bind_mutex_new(max, q),
            core.futoin_bind_mutex_free)
    end

    --- Throttle(max [, period_ms [, max_queue [, tool]]]).
    function M.Throttle(max, period_ms, max_queue, tool)
        max = count_arg(max, "Throttle(max, ...): max", nil, 1)
        if max == nil then
            error("Throttle(max, period_ms, max_queue, tool): max is required", 2)
        end
        period_ms = count_arg(period_ms, "Throttle(...): period_ms", 1000, 1, UINT32_MAX)
        local q = queue_arg(max_queue, "Throttle(...): max_queue")
        tool = tool_arg(tool, "Throttle(max, period_ms, max_queue, tool)")
        local ok, ptr = pcall(core.tool_ptr, tool)
        if not ok then
            error(ptr, 2)
        end
        return sync_object("Throttle",
            core.futoin_bind_throttle_new(ptr, max, period_ms, q),
            core.futoin_bind_throttle_free, tool)
    end

    local LIMITER_OPTIONS = { concurrent = true, max_queue = true, rate = true,
        period_ms = true, burst = true, tool = true }

    --- Limiter{ concurrent = 1, max_queue = 0, rate = 1, period_ms = 1000,
    -- burst = 0, tool = default_tool() }.
    function M.Limiter(o)
        o = o or {}
        if type(o) ~= "table" then
            error("Limiter(opts): opts must be a table, got " .. type(o), 2)
        end
        for k in pairs(o) do
            if not LIMITER_OPTIONS[k] then
                error(("Limiter(opts): unknown option %s"):format(tostring(k)), 2)
            end
        end
        local tool = tool_arg(o.tool, "Limiter{ tool }")
        local concurrent = count_arg(o.concurrent, "Limiter{}: concurrent", 1, 1)
        local max_queue = count_arg(o.max_queue, "Limiter{}: max_queue", 0, 0)
        local rate = count_arg(o.rate, "Limiter{}: rate", 1, 1)
        local period_ms = count_arg(o.period_ms, "Limiter{}: period_ms", 1000, 1, UINT32_MAX)
        local burst = count_arg(o.burst, "Limiter{}: burst", 0, 0)
        local ok, ptr = pcall(core.tool_ptr, tool)
        if not ok then
            error(ptr, 2)
        end
        return sync_object("Limiter", core.futoin_bind_limiter_new(ptr, concurrent,
            max_queue, rate, period_ms, burst), core.futoin_bind_limiter_free, tool)
    end

    M.UNLIMITED = core.futoin_bind_unlimited()
end
