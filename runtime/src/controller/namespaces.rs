//! One watch per namespace, merged into the one stream a reflector follows, for a controller
//! run [`in_namespaces`](super::Controller::in_namespaces).
//!
//! kube's reflector store replaces its whole content at each `InitDone`: fed the interleaved
//! events of several namespaces' watches, one namespace's relist would empty the others. The
//! merge keeps the reflector's protocol for the whole: one `Init`, the objects of every
//! namespace's first list as `InitApply`, one `InitDone` once every namespace has listed. After
//! that a namespace's relist (its watch expired) reaches the reflector as what it changed:
//! `Apply` for each object it lists, `Delete` for each object of that namespace the cache holds
//! and the relist no longer lists (deleted while the watch was down).

use std::collections::BTreeMap;

use futures::{Stream, StreamExt};
use kube::ResourceExt;
use kube::runtime::reflector::Store;
use kube::runtime::watcher::{self, Event};

/// The events of `watches` (each namespace's, with its name) merged for one reflector whose
/// cache is `store`; see the [module](self).
pub(super) fn merged<K, S>(
    watches: Vec<(String, S)>,
    store: Store<K>,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static
where
    K: kube::Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    S: Stream<Item = Result<Event<K>, watcher::Error>> + Send + Unpin + 'static,
{
    let mut merge = Merge {
        namespaces: watches.iter().map(|(n, _)| n.clone()).collect(),
        first_lists: Some(vec![None; watches.len()]),
        listing: vec![None; watches.len()],
        store,
    };
    let tagged = watches
        .into_iter()
        .enumerate()
        .map(|(index, (_, watch))| watch.map(move |event| (index, event)));
    futures::stream::once(futures::future::ready(vec![Ok(Event::Init)]))
        .chain(
            futures::stream::select_all(tagged).map(move |(index, event)| match event {
                Ok(event) => merge.step(index, event).into_iter().map(Ok).collect(),
                Err(error) => vec![Err(error)],
            }),
        )
        .flat_map(futures::stream::iter)
}

/// The state of a merge of the watches of several namespaces (by index).
struct Merge<K: kube::Resource<DynamicType = ()> + Clone + 'static> {
    namespaces: Vec<String>,
    /// Until every namespace has listed once: what each listed (and watched since), by name;
    /// `None` for a namespace whose first list is not complete.
    first_lists: Option<Vec<Option<BTreeMap<String, K>>>>,
    /// Each namespace's list under way, if one is.
    listing: Vec<Option<Vec<K>>>,
    /// The reflector's cache, which holds everything emitted before.
    store: Store<K>,
}

impl<K: kube::Resource<DynamicType = ()> + Clone + 'static> Merge<K> {
    /// The events the reflector gets for `event` of the watch of namespace `index`.
    fn step(&mut self, index: usize, event: Event<K>) -> Vec<Event<K>> {
        match event {
            Event::Init => {
                self.listing[index] = Some(Vec::new());
                Vec::new()
            }
            Event::InitApply(object) => {
                self.listing[index].get_or_insert_default().push(object);
                Vec::new()
            }
            Event::InitDone => {
                let listed = self.listing[index].take().unwrap_or_default();
                self.listed(index, listed)
            }
            Event::Apply(object) => match self.first_list_of(index) {
                Some(objects) => {
                    objects.insert(object.name_any(), object);
                    Vec::new()
                }
                None => vec![Event::Apply(object)],
            },
            Event::Delete(object) => match self.first_list_of(index) {
                Some(objects) => {
                    objects.remove(&object.name_any());
                    Vec::new()
                }
                None => vec![Event::Delete(object)],
            },
        }
    }

    /// Before every namespace has listed: what namespace `index` listed so far.
    fn first_list_of(&mut self, index: usize) -> Option<&mut BTreeMap<String, K>> {
        self.first_lists.as_mut()?[index].as_mut()
    }

    /// The events for a complete list of namespace `index`.
    fn listed(&mut self, index: usize, listed: Vec<K>) -> Vec<Event<K>> {
        if let Some(first_lists) = &mut self.first_lists {
            first_lists[index] = Some(listed.into_iter().map(|o| (o.name_any(), o)).collect());
            if first_lists.iter().any(Option::is_none) {
                return Vec::new();
            }
            let first_lists = self.first_lists.take().unwrap_or_default();
            let mut events: Vec<Event<K>> = first_lists
                .into_iter()
                .flatten()
                .flat_map(BTreeMap::into_values)
                .map(Event::InitApply)
                .collect();
            events.push(Event::InitDone);
            return events;
        }
        let namespace = self.namespaces[index].as_str();
        let names: std::collections::HashSet<String> =
            listed.iter().map(|o| o.name_any()).collect();
        let gone = self
            .store
            .state()
            .into_iter()
            .filter(|o| {
                o.namespace().as_deref() == Some(namespace) && !names.contains(&o.name_any())
            })
            .map(|o| Event::Delete((*o).clone()));
        listed.into_iter().map(Event::Apply).chain(gone).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::channel::mpsc;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use kube::runtime::reflector;

    fn config(namespace: &str, name: &str, version: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(namespace.into()),
                resource_version: Some(version.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    type Sender = mpsc::UnboundedSender<Result<Event<ConfigMap>, watcher::Error>>;

    /// The merge of two namespaces' watches into a reflector: the senders of each watch, and
    /// the cache.
    fn two_namespaces() -> (
        Sender,
        Sender,
        Store<ConfigMap>,
        impl Stream<Item = Event<ConfigMap>> + Unpin,
    ) {
        let (a, a_events) = mpsc::unbounded();
        let (b, b_events) = mpsc::unbounded();
        let (store, writer) = reflector::store();
        let merged = merged(
            vec![("a".into(), a_events), ("b".into(), b_events)],
            store.clone(),
        );
        let events = reflector::reflector(writer, merged).map(|event| event.expect("no error"));
        (a, b, store, Box::pin(events))
    }

    fn names(store: &Store<ConfigMap>) -> Vec<String> {
        let mut names: Vec<String> = store
            .state()
            .iter()
            .map(|o| format!("{}/{}", o.namespace().unwrap_or_default(), o.name_any()))
            .collect();
        names.sort();
        names
    }

    /// What the reflector was given, in order, as `kind namespace/name` lines.
    async fn next(
        events: &mut (impl Stream<Item = Event<ConfigMap>> + Unpin),
        n: usize,
    ) -> Vec<String> {
        let mut seen = Vec::new();
        for _ in 0..n {
            let event = events.next().await.expect("an event");
            let describe = |kind: &str, o: &ConfigMap| {
                format!(
                    "{kind} {}/{}",
                    o.namespace().unwrap_or_default(),
                    o.name_any()
                )
            };
            seen.push(match &event {
                Event::Init => "Init".to_owned(),
                Event::InitDone => "InitDone".to_owned(),
                Event::InitApply(o) => describe("InitApply", o),
                Event::Apply(o) => describe("Apply", o),
                Event::Delete(o) => describe("Delete", o),
            });
        }
        seen
    }

    #[test]
    fn the_first_list_ends_once_every_namespace_has_listed_with_what_each_watched_meanwhile() {
        let (store, _writer) = reflector::store::<ConfigMap>();
        let mut merge = Merge {
            namespaces: vec!["a".into(), "b".into()],
            first_lists: Some(vec![None, None]),
            listing: vec![None, None],
            store,
        };
        let describe = |events: Vec<Event<ConfigMap>>| -> Vec<String> {
            events
                .iter()
                .map(|event| match event {
                    Event::InitApply(o) => {
                        format!("InitApply {}/{}", o.namespace().unwrap(), o.name_any())
                    }
                    Event::InitDone => "InitDone".to_owned(),
                    other => format!("unexpected {other:?}"),
                })
                .collect()
        };
        let mut step = |index: usize, event: Event<ConfigMap>| describe(merge.step(index, event));
        let nothing: Vec<String> = Vec::new();
        assert_eq!(step(0, Event::Init), nothing);
        assert_eq!(step(0, Event::InitApply(config("a", "x", "1"))), nothing);
        assert_eq!(step(0, Event::InitApply(config("a", "gone", "1"))), nothing);
        assert_eq!(step(0, Event::InitDone), nothing, "b has not listed yet");
        // a's watch goes on while b lists: part of the first list.
        assert_eq!(step(0, Event::Apply(config("a", "y", "2"))), nothing);
        assert_eq!(step(0, Event::Delete(config("a", "gone", "1"))), nothing);
        assert_eq!(step(1, Event::Init), nothing);
        assert_eq!(step(1, Event::InitApply(config("b", "z", "3"))), nothing);
        assert_eq!(
            step(1, Event::InitDone),
            [
                "InitApply a/x",
                "InitApply a/y",
                "InitApply b/z",
                "InitDone"
            ]
        );
    }

    #[tokio::test]
    async fn a_relist_of_one_namespace_keeps_the_others_and_deletes_what_it_no_longer_lists() {
        let (a, b, store, mut events) = two_namespaces();
        for (sender, namespace) in [(&a, "a"), (&b, "b")] {
            for event in [
                Event::Init,
                Event::InitApply(config(namespace, "x", "1")),
                Event::InitApply(config(namespace, "y", "1")),
                Event::InitDone,
            ] {
                sender.unbounded_send(Ok(event)).unwrap();
            }
        }
        assert_eq!(next(&mut events, 6).await.last().unwrap(), "InitDone");
        // a's watch expired: it relists; y was deleted meanwhile, x changed.
        for event in [
            Event::Init,
            Event::InitApply(config("a", "x", "5")),
            Event::InitDone,
        ] {
            a.unbounded_send(Ok(event)).unwrap();
        }
        assert_eq!(next(&mut events, 2).await, ["Apply a/x", "Delete a/y"]);
        assert_eq!(names(&store), ["a/x", "b/x", "b/y"]);
        b.unbounded_send(Ok(Event::Delete(config("b", "x", "1"))))
            .unwrap();
        assert_eq!(next(&mut events, 1).await, ["Delete b/x"]);
        assert_eq!(names(&store), ["a/x", "b/y"]);
    }

    #[tokio::test]
    async fn a_first_list_that_restarts_keeps_only_what_the_complete_list_holds() {
        let (a, b, store, mut events) = two_namespaces();
        for event in [
            Event::Init,
            Event::InitApply(config("a", "stale", "1")),
            Event::Init,
        ] {
            a.unbounded_send(Ok(event)).unwrap();
        }
        for event in [Event::InitApply(config("a", "x", "2")), Event::InitDone] {
            a.unbounded_send(Ok(event)).unwrap();
        }
        for event in [Event::Init, Event::InitDone] {
            b.unbounded_send(Ok(event)).unwrap();
        }
        assert_eq!(
            next(&mut events, 3).await,
            ["Init", "InitApply a/x", "InitDone"]
        );
        assert_eq!(names(&store), ["a/x"]);
    }
}
