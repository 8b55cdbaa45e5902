"""A benchmark section small enough for the runner's tests (run in a child process by benchmarks.run)."""


def run() -> dict:
    return {"answer": sum(range(10))}
