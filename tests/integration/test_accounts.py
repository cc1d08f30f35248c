"""Workspace accounts against DynamoDB (moto over HTTP), table created from template.yaml."""

import pytest

from svc_shared.core.errors import AlreadyExists, InvalidInput, NotFound, RateLimited, Unauthenticated
from svc_shared.wiring import services


@pytest.fixture
def accounts(app_env):
    return services.accounts()


def test_new_user_gets_a_personal_workspace_they_own(accounts):
    user = accounts.create_user(
        email="Ada@Example.com", password="pw-123456", display_name="Ada", plan="paid"
    )
    assert user.email == "ada@example.com"
    assert user.plan == "paid"
    assert not user.repo_host_connected
    spaces = accounts.list_workspaces(user.id)
    assert [(w.id, w.role, w.personal, w.project_count) for w in spaces] == [
        (user.default_workspace_id, "owner", True, 0)
    ]
    assert accounts.get_workspace(user).name == "Ada's workspace"


def test_email_is_unique_whatever_its_case(accounts):
    accounts.create_user(email="ada@example.com", password="pw-123456")
    with pytest.raises(AlreadyExists):
        accounts.create_user(email="ADA@example.com", password="other-pw-1")


@pytest.mark.parametrize("email", ["", "no-at-sign", "a@b", "a b@c.d", "@example.com"])
def test_invalid_email_is_refused(accounts, email):
    with pytest.raises(InvalidInput, match="email"):
        accounts.create_user(email=email, password="pw-123456")


def test_password_length_limits_are_enforced_at_the_edge(accounts):
    with pytest.raises(InvalidInput, match="password"):
        accounts.create_user(email="a@example.com", password="1234567")
    assert accounts.create_user(email="b@example.com", password="12345678")
    assert accounts.create_user(email="c@example.com", password="x" * 1024)
    with pytest.raises(InvalidInput, match="password"):
        accounts.create_user(email="d@example.com", password="x" * 1025)


def test_unknown_plan_is_refused(accounts):
    with pytest.raises(InvalidInput, match="plan"):
        accounts.create_user(email="a@example.com", password="pw-123456", plan="gold")


def test_wrong_password_and_unknown_email_fail_the_same_way(accounts):
    accounts.create_user(email="ada@example.com", password="pw-123456")
    with pytest.raises(Unauthenticated) as wrong:
        accounts.authenticate("ada@example.com", "nope-nope")
    with pytest.raises(Unauthenticated) as unknown:
        accounts.authenticate("nobody@example.com", "pw-123456")
    assert wrong.value.message == unknown.value.message == "Invalid email or password."


def test_set_plan_moves_a_user_between_plans(accounts):
    user = accounts.create_user(email="ada@example.com", password="pw-123456")
    assert accounts.set_plan(user.id, "paid").plan == "paid"
    assert accounts.get_user(user.id).plan == "paid"
    with pytest.raises(NotFound):
        accounts.set_plan("missing", "paid")


def test_collaborator_sees_joined_workspace_with_their_role(accounts):
    owner = accounts.create_user(email="owner@example.com", password="pw-123456", display_name="Olga")
    guest = accounts.create_user(email="guest@example.com", password="pw-123456", display_name="Gus")
    accounts.add_collaborator(owner.default_workspace_id, guest.id, "admin")
    spaces = accounts.list_workspaces(guest.id)
    assert [(w.name, w.role, w.personal) for w in spaces] == [
        ("Gus's workspace", "owner", True),
        ("Olga's workspace", "admin", False),
    ]
    assert accounts.get_workspace(guest, owner.default_workspace_id).role == "admin"


def test_workspace_of_someone_else_is_not_found(accounts):
    owner = accounts.create_user(email="owner@example.com", password="pw-123456")
    stranger = accounts.create_user(email="stranger@example.com", password="pw-123456")
    with pytest.raises(NotFound):
        accounts.get_workspace(stranger, owner.default_workspace_id)


def test_session_is_revoked_by_sign_out(app_env):
    services.accounts().create_user(email="ada@example.com", password="pw-123456")
    signin = services.signin()
    session = signin.sign_in("ada@example.com", "pw-123456", "10.0.0.1")
    assert signin.current_user(session.cookie).email == "ada@example.com"
    signin.sign_out(session.cookie)
    with pytest.raises(Unauthenticated):
        signin.current_user(session.cookie)


def test_session_expires_after_its_lifetime(clock):
    services.accounts().create_user(email="ada@example.com", password="pw-123456")
    signin = services.signin()
    session = signin.sign_in("ada@example.com", "pw-123456", "10.0.0.1")
    clock.advance(14 * 24 * 3600 - 1)
    assert signin.current_user(session.cookie).email == "ada@example.com"
    clock.advance(1)
    with pytest.raises(Unauthenticated):
        signin.current_user(session.cookie)


def test_failed_sign_ins_back_off_that_address_only_never_the_account(clock):
    services.accounts().create_user(email="ada@example.com", password="pw-123456")
    signin = services.signin()
    for _ in range(5):
        with pytest.raises(Unauthenticated):
            signin.sign_in("ada@example.com", "wrong-pass", "10.0.0.1")
    with pytest.raises(RateLimited) as limited:
        signin.sign_in("ada@example.com", "pw-123456", "10.0.0.1")
    assert 0 < limited.value.retry_after <= 900
    assert signin.sign_in("ada@example.com", "pw-123456", "10.0.0.2").user_id  # the owner, elsewhere
    clock.advance(limited.value.retry_after)
    assert signin.sign_in("ada@example.com", "pw-123456", "10.0.0.1").user_id


def test_one_address_is_limited_to_30_attempts_per_window(clock):
    services.accounts().create_user(email="ada@example.com", password="pw-123456")
    signin = services.signin()
    for i in range(30):
        with pytest.raises(Unauthenticated):
            signin.sign_in(f"user{i}@example.com", "wrong-pass", "10.9.9.9")
    with pytest.raises(RateLimited):
        signin.sign_in("ada@example.com", "pw-123456", "10.9.9.9")
    assert signin.sign_in("ada@example.com", "pw-123456", "10.1.1.1").user_id
