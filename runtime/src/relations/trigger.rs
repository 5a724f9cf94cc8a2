//! The trigger streams of relations: a watch of the related kind, its events followed by the
//! relation's [`RelationCache`], what they show changed mapped to the controller's objects.

use std::fmt::Debug;
use std::sync::Arc;

use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::api::Api;
use kube::core::{ApiResource, DynamicObject, DynamicResourceScope, PartialObjectMeta};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use serde::de::DeserializeOwned;

use super::cache::{Cached, RelationCache, Seen};
use super::{TriggerInputs, Triggers};
use crate::shared_watch::{WatchKey, shared, without_managed_fields};
use crate::trigger::{Related, Trigger};

/// The owners (of kind `K`) of the children (of kind `C`) whose watch events are news, watched
/// as `D`: metadata-only ([`Metadata`]: an API of `PartialObjectMeta` asks the API server for
/// `PartialObjectMetadata`, no bodies travel or are kept), or whole (`DynamicObject`).
pub(super) fn owners<K, C, D>(
    inputs: TriggerInputs<K>,
    config: watcher::Config,
    cache: Arc<RelationCache>,
) -> Triggers<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    C: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    D: Served,
    Arc<D>: Into<Seen>,
{
    let store = inputs.store.clone();
    changes::<C, D>(&inputs, &config, cache)
        .map_ok(move |changed| {
            changed
                .iter()
                .filter_map(|child| {
                    let owner = controller_owner(&child.metadata, &store)?;
                    Some((owner, Trigger::Child(related::<C>(child))))
                })
                .collect()
        })
        .boxed()
}

/// The objects `map` returns for each related object (of kind `O`) whose watch event is news.
pub(super) fn mapped<K, O, I>(
    inputs: TriggerInputs<K>,
    config: watcher::Config,
    cache: Arc<RelationCache>,
    map: fn(&O, &Store<K>) -> I,
) -> Triggers<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    O: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    I: IntoIterator<Item = ObjectRef<K>> + 'static,
{
    let store = inputs.store.clone();
    changes::<O, DynamicObject>(&inputs, &config, cache)
        .map_ok(move |changed| {
            let mut mapped = Vec::new();
            for object in changed {
                let trigger = Trigger::Related(related::<O>(&object));
                match DynamicObject::clone(&object).try_parse::<O>() {
                    Ok(object) => mapped.extend(
                        map(&object, &store)
                            .into_iter()
                            .map(|owner| (owner, trigger.clone())),
                    ),
                    Err(error) => {
                        tracing::warn!(kind = %O::kind(&()), %error, "a watched object does not deserialize; its change starts no pass");
                    }
                }
            }
            mapped
        })
        .boxed()
}

/// A watch event with the namespace its watch lists (`None`: the whole cluster), its object
/// behind an `Arc` (as a shared watch hands it to each of its subscribers).
type Scoped<D> = (Option<Arc<str>>, watcher::Event<Arc<D>>);

/// A form a related kind is watched and cached in: its metadata ([`Metadata`]) or the whole
/// object (`DynamicObject`), dynamic so that a namespace can be given for any kind.
pub(crate) trait Served:
    Resource<DynamicType = ApiResource, Scope = DynamicResourceScope>
    + Clone
    + DeserializeOwned
    + Debug
    + Send
    + Sync
    + 'static
{
}

impl<D> Served for D where
    D: Resource<DynamicType = ApiResource, Scope = DynamicResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static
{
}

/// The form owned children are watched in: their metadata alone.
pub(super) type Metadata = PartialObjectMeta<DynamicObject>;

/// The events of the watch of kind `C` served as `D` (a dynamic object, or its metadata; dynamic
/// so that a namespace can be given for any kind) with `config`, where the controller watches:
/// one watch of the whole cluster, or one per namespace, merged; each retried with backoff. A
/// watch the controller shares with others of its operator comes from their shared hub (its
/// failures reported there).
fn scoped_watches<C, D>(
    inputs: &TriggerInputs<impl Resource<DynamicType = ()> + Clone>,
    config: &watcher::Config,
) -> BoxStream<'static, Result<Scoped<D>, watcher::Error>>
where
    C: Resource<DynamicType = ()>,
    D: Served,
{
    let resource = ApiResource::erase::<C>(&());
    let client = &inputs.client;
    let scopes: Vec<Option<&str>> = if inputs.namespaces.is_empty() {
        vec![None]
    } else {
        inputs.namespaces.iter().map(|n| Some(n.as_str())).collect()
    };
    futures::stream::select_all(scopes.into_iter().map(|scope| {
        let api: Api<D> = match scope {
            Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
            None => Api::all_with(client.clone(), &resource),
        };
        let events = match &inputs.shared {
            Some((shared, on_error)) => {
                let key = WatchKey::new::<D>(&resource, scope, config);
                let (api, config) = (api.clone(), config.clone());
                shared
                    .hub::<D>(&key, resource.clone(), move || {
                        watcher(api.clone(), config.clone())
                            .default_backoff()
                            .map_ok(without_managed_fields)
                            .boxed()
                    })
                    .map(|hub| hub.subscribe(on_error.clone()).1.map(Ok).boxed())
            }
            None => None,
        };
        let events = events.unwrap_or_else(|| {
            watcher(api, config.clone())
                .default_backoff()
                .map_ok(shared)
                .boxed()
        });
        let scope: Option<Arc<str>> = scope.map(Arc::from);
        events.map_ok(move |event| (scope.clone(), event)).boxed()
    }))
    .boxed()
}

/// The object of kind `K` `object` is, as a [`Trigger`] names it.
fn related<K: Resource<DynamicType = ()>>(object: &Cached) -> Related {
    Related {
        kind: K::kind(&()).into_owned(),
        namespace: object.metadata.namespace.clone(),
        name: object.metadata.name.clone().unwrap_or_default(),
    }
}

/// What the events of the watch of kind `C` served as `D` show changed, as `cache` judges them
/// (see [`RelationCache`]), and what the events it parked behind the controller's own writes
/// show once those are answered.
fn changes<C, D>(
    inputs: &TriggerInputs<impl Resource<DynamicType = ()> + Clone>,
    config: &watcher::Config,
    cache: Arc<RelationCache>,
) -> BoxStream<'static, Result<Vec<Cached>, watcher::Error>>
where
    C: Resource<DynamicType = ()>,
    D: Served,
    Arc<D>: Into<Seen>,
{
    let watched = scoped_watches::<C, D>(inputs, config).map_ok({
        let cache = cache.clone();
        move |(scope, event)| cache.observe(event, scope.as_deref())
    });
    let released = futures::stream::unfold(cache, |cache| async move {
        let news = cache.released().await;
        Some((Ok(news), cache))
    });
    futures::stream::select(watched, released).boxed()
}

/// The object of kind `K` that `child`'s controller ownerReference names, if the controller's
/// cache holds it: in the child's namespace, or cluster-scoped (the namespace of a reference is
/// the dependent's, and a cluster-scoped owner has none). Only the reference with
/// `controller: true` counts, matched by group and kind (any version), as controller-runtime's
/// `Owns` does.
pub(crate) fn controller_owner<K>(child: &ObjectMeta, store: &Store<K>) -> Option<ObjectRef<K>>
where
    K: Resource<DynamicType = ()> + Clone,
{
    let owner = super::controller_of(child)?;
    let group = owner
        .api_version
        .rsplit_once('/')
        .map_or("", |(group, _)| group);
    if group != K::group(&()) || owner.kind != K::kind(&()) {
        return None;
    }
    let mut reference = ObjectRef::<K>::new(&owner.name);
    if let Some(namespace) = &child.namespace {
        reference = reference.within(namespace);
    }
    // The store falls back to the cluster-scoped key; the owner's own reference is the one its
    // other triggers use, so that one object never has two passes at once.
    store
        .get(&reference)
        .map(|owner| ObjectRef::from_obj(&*owner))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use kube::runtime::reflector;

    fn store_of<K: Resource<DynamicType = ()> + Clone>(objects: Vec<K>) -> Store<K> {
        let (store, mut writer) = reflector::store();
        writer.apply_watcher_event(&watcher::Event::Init);
        for object in objects {
            writer.apply_watcher_event(&watcher::Event::InitApply(object));
        }
        writer.apply_watcher_event(&watcher::Event::InitDone);
        store
    }

    fn child(namespace: &str, owners: Vec<OwnerReference>) -> ObjectMeta {
        ObjectMeta {
            name: Some("child".into()),
            namespace: Some(namespace.into()),
            owner_references: Some(owners),
            ..ObjectMeta::default()
        }
    }

    fn reference(api_version: &str, kind: &str, name: &str, controller: bool) -> OwnerReference {
        OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            uid: "u".into(),
            controller: Some(controller),
            block_owner_deletion: None,
        }
    }

    #[test]
    fn the_controller_reference_names_a_namespaced_owner_in_the_childs_namespace() {
        let owner = ConfigMap {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("demo".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let store = store_of(vec![owner]);
        let found = controller_owner(
            &child("demo", vec![reference("v1", "ConfigMap", "web", true)]),
            &store,
        );
        assert_eq!(found, Some(ObjectRef::new("web").within("demo")));
        // Not the controller reference, another kind, or another namespace: none.
        for owners in [
            vec![reference("v1", "ConfigMap", "web", false)],
            vec![reference("v1", "Secret", "web", true)],
            vec![reference("apps/v1", "ConfigMap", "web", true)],
        ] {
            assert_eq!(controller_owner(&child("demo", owners), &store), None);
        }
        let elsewhere = child("other", vec![reference("v1", "ConfigMap", "web", true)]);
        assert_eq!(controller_owner(&elsewhere, &store), None);
    }

    #[test]
    fn a_cluster_scoped_owner_is_found_without_a_namespace() {
        let owner = Namespace {
            metadata: ObjectMeta {
                name: Some("tenant-a".into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        let store = store_of(vec![owner]);
        let found = controller_owner(
            &child(
                "tenant-a",
                vec![reference("v1", "Namespace", "tenant-a", true)],
            ),
            &store,
        );
        assert_eq!(found, Some(ObjectRef::new("tenant-a")));
    }
}
