//! The typed ids as PostgreSQL `text`: written and read as their strings.

use bytes::BytesMut;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};

use crate::ids::{DeliveryId, EndpointId, EventId, TaskId, TenantId};

type BoxError = Box<dyn std::error::Error + Sync + Send>;

macro_rules! text_column {
    ($($id:ty),*) => {$(
        impl ToSql for $id {
            fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
                self.as_str().to_sql(ty, out)
            }

            fn accepts(ty: &Type) -> bool {
                <&str as ToSql>::accepts(ty)
            }

            to_sql_checked!();
        }

        impl<'a> FromSql<'a> for $id {
            fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
                <String as FromSql>::from_sql(ty, raw).map(Self::from)
            }

            fn accepts(ty: &Type) -> bool {
                <String as FromSql>::accepts(ty)
            }
        }
    )*};
}

text_column!(TenantId, EndpointId, EventId, DeliveryId, TaskId);
