-- The order pipeline's Lua part (tests/demo/polyglot/README.md): the
-- pricing rules, and the decision on an order that fails its credit check.
-- Each function is a step: (asi, ...values).
local M = {}

local function split(s)
    local out = {}
    for name in s:gmatch("[^,]+") do
        out[#out + 1] = name
    end
    return out
end

--- Rules: 10% off a line of 10 or more, 0.20 off each widget.
function M.apply(asi)
    local st = asi:state()
    local names, qtys, prices = split(st.names), st.qtys, st.prices
    local net = {}
    for i = 1, #names do
        local p = prices[i]
        local rules = {}
        if names[i] == "widget" then
            p = p - 0.20
            rules[#rules + 1] = "widget promo -0.20"
        end
        if qtys[i] >= 10 then
            p = p * 0.90
            rules[#rules + 1] = "bulk -10%"
        end
        net[i] = p
        print(("[lua] %-6s %2d x %6.2f -> %6.2f%s"):format(names[i], qtys[i],
            prices[i], p, #rules > 0 and ("  (" .. table.concat(rules, ", ") .. ")") or ""))
    end
    -- a table stays Lua's own in asi:state(); shared_set copies the
    -- sequence of numbers to the store the other languages read
    asi:shared_set("net_prices", net)
end

--- The credit check is Java's; when it fails, the order goes to review.
function M.approve(asi)
    asi:add_foreign("java", "demo.Totals", "checkCredit", function(a, code)
        local st = a:state()
        print(("[lua] the credit check failed in java: %s (%s)"):format(code,
            st.error_info))
        print("[lua] -> the order goes to manual review; where it was raised:")
        print(a:async_traceback())
        st.status = "REVIEW"
        a:success()
    end)
end

return M
