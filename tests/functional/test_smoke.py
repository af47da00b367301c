from tests.support import Account


def test_new_account_lists_both_built_in_roles(account: Account) -> None:
    reply = account.api.get("/roles")
    assert reply.status == 200
    assert [(role["name"], role["isSystem"]) for role in reply.json] == [("Administrator", True), ("User", True)]
