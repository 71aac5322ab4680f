--- The Lua host of tests/debian/check.sh: 20, Java's twice (class DebSteps:
-- the class folder on CLASSPATH), Python's add_two; prints the result and
-- the package's version.
local fa = require "futoin_async"
local root = fa.AsyncSteps()
root:add(function(asi) asi:success(20) end)
root:add_foreign("java", "DebSteps", "twice")
root:add_foreign("python", "deb_steps", "add_two")
print("lua host got " .. tostring(root:run()))
print("lua futoin_async " .. fa._VERSION)
