from tests.support.graph_fixtures import workspace  # noqa: F401  (fixture)
