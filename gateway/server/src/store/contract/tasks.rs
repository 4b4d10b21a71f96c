//! Background tasks: a claim takes a running task nobody live holds, writes
//! its own token, and each step is saved only under that token; a task taken
//! by another claim cannot be saved by the first; an ended task is claimed by
//! no one.

use crate::store::testing::TestStore;
use crate::store::{TaskClaim, TaskRecord, TaskState, TaskWork};

contract_tests! {
    ended_tasks_are_swept_after_their_time_and_running_ones_never,
    a_task_is_saved_only_by_the_claim_that_holds_it,
    tasks_list_newest_first_by_tenant_and_page,
}

async fn a_task_is_saved_only_by_the_claim_that_holds_it(t: TestStore) {
    let s = &t.store;
    assert!(
        s.claim_task(&TaskClaim::new("n1", 0))
            .await
            .unwrap()
            .is_none()
    );
    let task = TaskRecord::new("acme".into(), TaskWork::TenantDelete, 10);
    s.create_task(&task).await.unwrap();
    let first = TaskClaim::new("n1", 20);
    let mut held = s.claim_task(&first).await.unwrap().expect("claimed");
    assert_eq!(held.id, task.id);
    assert!(held.held_by(&first.token));
    held.examined = 5;
    held.resume = Some("records".into());
    assert!(s.save_task(&held, &first.token).await.unwrap());
    // Its lease passed (the holder paused): another claim takes it, from the
    // last saved step, and the first can no longer save.
    let later = crate::store::TASK_LEASE_MS + 1_000;
    let second = TaskClaim::new("n2", later);
    let taken = s.claim_task(&second).await.unwrap().expect("taken over");
    assert_eq!(
        (taken.examined, taken.resume.as_deref()),
        (5, Some("records"))
    );
    held.examined = 6;
    assert!(!s.save_task(&held, &first.token).await.unwrap(), "fenced");
    let mut ended = taken.clone();
    ended.end(None, later + 1);
    assert!(s.save_task(&ended, &second.token).await.unwrap());
    let stored = s.any_task(&task.id).await.unwrap().unwrap();
    assert_eq!((stored.state, stored.examined), (TaskState::Finished, 5));
    let third = TaskClaim::new("n3", later * 2);
    assert!(
        s.claim_task(&third).await.unwrap().is_none(),
        "an ended task stays ended"
    );
}

async fn tasks_list_newest_first_by_tenant_and_page(t: TestStore) {
    let s = &t.store;
    let mut made = Vec::new();
    for (i, tenant) in ["a", "b", "a", "a"].into_iter().enumerate() {
        let task = TaskRecord::new(tenant.into(), TaskWork::TenantDelete, 10 + i as u64);
        s.create_task(&task).await.unwrap();
        made.push(task);
    }
    let ids = |p: &crate::store::TaskPage| p.tasks.iter().map(|t| t.id.clone()).collect::<Vec<_>>();
    let all = s.list_tasks(None, 10, None).await.unwrap();
    assert_eq!(
        ids(&all),
        made.iter().rev().map(|t| t.id.clone()).collect::<Vec<_>>()
    );
    assert_eq!(all.next, None);
    let first = s.list_tasks(Some(&"a".into()), 2, None).await.unwrap();
    assert_eq!(ids(&first), [made[3].id.clone(), made[2].id.clone()]);
    let rest = s
        .list_tasks(Some(&"a".into()), 2, first.next.as_ref())
        .await
        .unwrap();
    assert_eq!(ids(&rest), [made[0].id.clone()]);
    assert!(
        s.task(&"b".into(), &made[0].id).await.unwrap().is_none(),
        "another tenant's"
    );
    assert!(s.task(&"a".into(), &made[0].id).await.unwrap().is_some());
}

async fn ended_tasks_are_swept_after_their_time_and_running_ones_never(t: TestStore) {
    let s = &t.store;
    let mut old = TaskRecord::new("a".into(), TaskWork::TenantDelete, 1);
    old.end(None, 10);
    let mut recent = TaskRecord::new("a".into(), TaskWork::TenantDelete, 2);
    recent.end(Some("failed".into()), 1_000);
    let running = TaskRecord::new("a".into(), TaskWork::TenantDelete, 3);
    for task in [&old, &recent, &running] {
        s.create_task(task).await.unwrap();
    }
    assert_eq!(s.sweep_tasks(500, 100).await.unwrap(), 1);
    assert!(s.any_task(&old.id).await.unwrap().is_none());
    assert!(s.any_task(&recent.id).await.unwrap().is_some());
    assert_eq!(s.sweep_tasks(u64::MAX / 2, 100).await.unwrap(), 1);
    assert!(
        s.any_task(&running.id).await.unwrap().is_some(),
        "running stays"
    );
}
