from tests.support.graph_fixtures import settings, workspace  # noqa: F401  (fixtures)
