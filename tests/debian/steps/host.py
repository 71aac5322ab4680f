"""The Python host of tests/debian/check.sh: 20, Lua's double, Java's
addTwo (class DebSteps: the class folder on CLASSPATH); prints the result
and the package's version."""
import futoin_async
from futoin_async import AsyncSteps

root = AsyncSteps()
root.add(lambda asi: 20)
root.add_foreign("lua", "deb_steps", "double")
root.add_foreign("java", "DebSteps", "addTwo")
print("python host got", root.run())
print("python futoin_async", futoin_async.__version__)
