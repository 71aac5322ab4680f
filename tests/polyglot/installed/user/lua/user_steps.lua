--- A user's Lua steps, found through LUA_PATH (the folder of this file,
-- before what `luarocks path` sets): any program with that LUA_PATH and
-- the rock on LUA_CPATH runs them, Lua or not.
--
--   append(trail, n) -> trail .. ">lua", n + 1
--   fail()           -> error UserError, error_info "lua"
local M = {}

function M.append(asi, trail, n)
    return trail .. ">lua", n + 1
end

function M.fail(asi)
    asi:error("UserError", "lua")
end

return M
