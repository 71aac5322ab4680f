"""The order pipeline's Python part (tests/demo/polyglot/README.md):
reading the order, and asking a (slow) service for an exchange rate.
Each function is a step: (asi, *values)."""
import re


def parse(asi, text):
    """Reads "order 1042 for ACME in EUR: 3 x widget @ 2.50; ..." into the
    flow's shared state, for the steps of the other languages."""
    head, lines = text.split(":", 1)
    number, customer, currency = re.match(
        r"order (\d+) for (\w+) in (\w+)", head.strip()).groups()
    names, qtys, prices = [], [], []
    for line in lines.split(";"):
        qty, name, price = re.match(
            r"\s*(\d+) x (\w+) @ ([\d.]+)", line).groups()
        names.append(name)
        qtys.append(int(qty))
        prices.append(float(price))
    st = asi.state
    st["order"] = int(number)
    st["customer"] = customer
    st["currency"] = currency
    st["names"] = ",".join(names)
    st["qtys"] = qtys
    st["prices"] = prices
    print(f"[python] order {number} for {customer}: "
          f"{len(names)} lines ({', '.join(names)}), in {currency}", flush=True)


def fetch_rate(asi, *values):
    """Asks the rate service and waits for its answer (which never comes
    in this demo: the C step around it gives up after 50 ms)."""
    currency = asi.state["currency"]
    print(f"[python] asking the rate service for USD -> {currency} ...",
          flush=True)

    def cancelled(asi):
        print("[python] rate request cancelled (the service was too slow)",
              flush=True)
    asi.set_cancel(cancelled)
    asi.wait_external()
