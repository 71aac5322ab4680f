"""The flow's state (asi.state) outside the flow's steps, and its view of
the flow's last error (issue 18 items 1 and 2, cross-language rule 6)."""
import pytest

from futoin_async import AsyncSteps, FutoInError


def test_a_write_from_a_timer_through_asi_state_is_kept(tool):
    seen = []

    def wait(asi):
        asi.state["x"] = 1
        asi.wait_external()

        def later():  # not a step: a timer that then completes the step
            asi.state["x"] = 2
            seen.append(asi.state["x"])
            asi.success()
        tool.call_soon(later)

    def read(asi):
        seen.append(asi.state["x"])
        seen.append(asi.state.x)  # the read did not bring the old one back
    root = AsyncSteps(tool).add(wait).add(read)
    root.run()
    assert seen == [2, 2, 2]
    assert root.state["x"] == 2


def test_a_write_through_a_kept_state_object_is_kept(tool):
    """No handle reaches the store when the write happens (the State
    object was kept from the step): the value is kept and published when
    the step is completed."""
    seen = []

    def wait(asi):
        st = asi.state
        st["x"] = 1
        st["gone"] = "soon"
        asi.wait_external()

        def later():
            st["x"] = 2
            st["y"] = "new"
            del st["gone"]
            seen.append((st["x"], st["y"], "gone" in st))
            asi.success()
        tool.call_soon(later)

    def read(asi):
        st = asi.state
        seen.append((st["x"], st.get("y"), "gone" in st))
    root = AsyncSteps(tool).add(wait).add(read)
    root.run()
    assert seen == [(2, "new", False), (2, "new", False)]


def test_the_state_view_of_the_last_error_agrees_with_the_accessors(tool):
    seen = []

    def both(asi, where):
        view = (asi.state.error_info, asi.state.last_exception, asi.state.async_stack)
        accessors = (asi.error_info, asi.last_exception, asi.async_stack)
        assert view[0] == accessors[0] and view[1] is accessors[1], (where, view, accessors)
        assert (view[2] is None) == (accessors[2] is None), where
        assert asi.state["error_info"] == asi.error_info
        assert ("error_info" in asi.state) == (asi.error_info is not None)
        seen.append((where, view[0], type(view[1]).__name__))

    def body(asi):
        def fail(asi):
            asi.error("Oops", "the info")

        def handler(asi, code):
            both(asi, "handler")
            asi.break_loop()
        asi.add(fail, handler)

    def after(asi):
        both(asi, "after the loop")
    root = AsyncSteps(tool).add(lambda asi: asi.loop(body)).add(after)
    root.run()
    assert seen == [("handler", "the info", "Oops"),  # errors.Oops
                    ("after the loop", None, "NoneType")]
    assert root.state.error_info is None and root.error_info is None


def test_the_state_view_of_an_unhandled_error_is_the_roots(tool):
    root = AsyncSteps(tool).add(lambda asi: asi.error("MyError", "my info"))
    with pytest.raises(FutoInError):
        root.run()
    assert root.state.error_info == root.error_info == "my info"
    assert root.state.last_exception is root.last_exception
    assert root.state.last_exception.code == "MyError"


def test_the_last_error_is_read_only_in_the_state(tool):
    def step(asi):
        for key in ("error_info", "last_exception", "async_stack"):
            with pytest.raises(TypeError):
                asi.state[key] = "mine"
            with pytest.raises(TypeError):
                del asi.state[key]
        assert "error_info" not in asi.state and list(asi.state) == []
    AsyncSteps(tool).add(step).run()
