--- Lua steps of tests/debian/check.sh's polyglot flows (installed into
-- /usr/local/share/lua/5.4 of the throwaway root: Lua's default path).
local M = {}

--- The value times two.
function M.double(asi, value)
    asi:success(value * 2)
end

--- The value plus two.
function M.add_two(asi, value)
    asi:success(value + 2)
end

return M
